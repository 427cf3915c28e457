"""Pages: what comes in is docs/ and everything the stages below give; what goes out is
the site (the MkDocs hooks, all of them in hooks/, charts, shown programs, notebooks,
diagrams, search, page weight). The top stage: nothing imports it."""
