"""`python -m pipeline.gpu_wheels`, the command README names: pipeline/records/gpu_wheels.py does the work."""
from pipeline.records.gpu_wheels import main

if __name__ == "__main__":
    raise SystemExit(main())
