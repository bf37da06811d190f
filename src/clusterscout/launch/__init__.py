"""Launch files (SkyPilot, dstack, Slurm), the nccl-tests fabric check and its verdict."""
