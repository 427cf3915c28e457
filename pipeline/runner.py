"""`python -m pipeline.runner`, the command README names: pipeline/running/runner.py does the work."""
from pipeline.running.runner import main

if __name__ == "__main__":
    raise SystemExit(main())
