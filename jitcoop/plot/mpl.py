"""matplotlib, imported when a picture is drawn (the numbers behind the pictures need numpy only)."""


def pyplot():
    """matplotlib.pyplot, or an ImportError that says how to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("jitcoop's pictures need matplotlib: pip install 'jitcoop[plot]'") from None
    return plt
