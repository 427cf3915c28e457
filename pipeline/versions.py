"""`python -m pipeline.versions`, the command README names: pipeline/records/versions.py does the work."""
from pipeline.records.versions import main

if __name__ == "__main__":
    raise SystemExit(main())
