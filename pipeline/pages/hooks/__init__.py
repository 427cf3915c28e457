"""The MkDocs hooks, all of them (mkdocs.yml lists them in the order they run). MkDocs loads
each as a lone file: each puts the repository's root on sys.path to import pipeline."""
