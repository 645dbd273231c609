"""Publish: everything that hands the rendered images to other systems (CI matrix, bake, Kubernetes, Slurm)."""
