"""The run edge: the pipeline, base replay, the property runner, git, fixtures and the results stream."""
