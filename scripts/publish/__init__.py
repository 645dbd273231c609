"""The release path: push images, build their SBOM, attach verify reports and SBOMs to digests, read them back."""
