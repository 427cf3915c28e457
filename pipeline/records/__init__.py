"""Records: what comes in is a run on another machine (a GPU run, someone's archive, the
version matrix); what goes out is results/ in one format, with provenance, and the
conditions a record was made under. Imports only pipeline.running."""
