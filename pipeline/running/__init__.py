"""Running snippets: what comes in is snippets/ (each file and the helpers it imports);
what goes out is each one's run, cached under .cache/ (discovery, the runner, the cache,
the sandbox, background runs under `make serve`). Imports nothing of the other stages."""
