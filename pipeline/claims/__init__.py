"""Claims the build checks: what comes in is a page's prose and the records; what goes
out is each claim checked (quoted messages, releases, "measured", status codes) and the
sentences written from records. Imports only pipeline.running and pipeline.records."""
