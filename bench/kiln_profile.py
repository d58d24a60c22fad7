"""Reads `kiln generate --profile --json` files (the charts' kiln figures)."""
import json


def load(path):
    """(the profile object, decode tokens/s) of one `kiln generate --json` file."""
    with open(path) as fh:
        d = json.load(fh)
    return d["profile"], d["decode_tokens_per_s"]
