"""`python -m pipeline.add_records`, the command README names: pipeline/records/add_records.py does the work."""
from pipeline.records.add_records import main

if __name__ == "__main__":
    raise SystemExit(main())
