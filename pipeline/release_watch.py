"""`python -m pipeline.release_watch`, the command README names: pipeline/records/release_watch.py does the work."""
from pipeline.records.release_watch import main

if __name__ == "__main__":
    raise SystemExit(main())
