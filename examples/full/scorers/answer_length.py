def scorer_fn(*, index: int, node_input: str, node_output: str, **kwargs) -> bool:
    """Whether the answer fits in 2,000 characters."""
    return len(node_output) <= 2000
