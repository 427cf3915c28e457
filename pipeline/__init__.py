"""The build stages: find snippets, run and cache them, draw charts, put both into pages."""
