"""Sign sealed evidence bundles with a validator key (rotation, or bundles sealed before signing).

    python3 scripts/sign_evidence.py --key ~/.config/faultkit/minishop-validator.key evidence/*/*/

Each bundle is verified against its manifest first; MANIFEST.json is not rewritten, so the bundle
digests the entries record stay the same, and SIGNATURE.json is written beside it as a DSSE envelope
of an in-toto statement over the bundle's files (a signature in the older format is replaced by
one). With --new, a new key is made at --key (mode 0600) with its public half at <key>.pub; the key
must lie outside the repository.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from faultkit.bundles import sign, verify_bundle
from faultkit.errors import FaultkitError
from faultkit.keys import fingerprint, generate, load_private
from faultkit.workspace import Workspace


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--key", type=Path, required=True, help="the validator's private key (PEM)")
    parser.add_argument("--new", action="store_true", help="make a new key at --key first")
    parser.add_argument("bundles", nargs="*", type=Path)
    args = parser.parse_args(argv)
    key_path = args.key.expanduser()
    try:
        root = Workspace.find().root
        if key_path.resolve().is_relative_to(root):
            raise FaultkitError(f"{key_path}: a private key inside the repository; keep it under ~/.config/faultkit")
        if args.new and key_path.exists():
            raise FaultkitError(f"{key_path}: exists already; remove it or drop --new")
        key = generate(key_path) if args.new else load_private(key_path)
        for folder in args.bundles:
            verify_bundle(folder)
            sign(folder, key)
    except FaultkitError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    print(f"{len(args.bundles)} bundles signed by {fingerprint(key.public_key())}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
