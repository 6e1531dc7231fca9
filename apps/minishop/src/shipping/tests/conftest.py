"""Make the service and shoplib importable in both the repo and build layouts."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
if not (ROOT / "shoplib").is_dir():
    # Repo layout: shoplib lives in src/, the service folder's parent.
    sys.path.insert(0, str(ROOT.parent))
