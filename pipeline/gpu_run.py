"""`python -m pipeline.gpu_run`, the command README names: pipeline/records/gpu_run.py does the work."""
from pipeline.records.gpu_run import main

if __name__ == "__main__":
    raise SystemExit(main())
