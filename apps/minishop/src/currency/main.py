"""currency: converts money amounts between currencies using rates.json."""

import json
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

from shoplib import App, HTTPError, Request

SERVICE = "currency"
DATA_FILE = Path(__file__).resolve().parent / "rates.json"


def load_rates(path: Path = DATA_FILE) -> dict[str, Decimal]:
    with path.open(encoding="utf-8") as fh:
        raw = json.load(fh)
    # Decimal via str avoids binary float artefacts in the cross rates.
    return {k: Decimal(str(v)) for k, v in raw.items() if not k.startswith("_")}


def convert(rates: dict[str, Decimal], amount_cents: int, from_code: str, to_code: str) -> int:
    """Convert integer cents between currencies via the EUR base, rounding half-even.

    All currencies are represented in hundredths of their unit for simplicity.
    """
    if from_code not in rates:
        raise HTTPError(400, f"unsupported currency {from_code!r}")
    if to_code not in rates:
        raise HTTPError(400, f"unsupported currency {to_code!r}")
    value = Decimal(amount_cents) / rates[from_code] * rates[to_code]
    return int(value.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def parse_convert(body: dict[str, Any]) -> tuple[int, str, str]:
    src = body.get("from")
    to_code = body.get("to_code")
    if not isinstance(src, dict) or not isinstance(to_code, str):
        raise HTTPError(400, "expected {from: {currency_code, amount_cents}, to_code}")
    amount = src.get("amount_cents")
    code = src.get("currency_code")
    if not isinstance(amount, int) or isinstance(amount, bool) or not isinstance(code, str):
        raise HTTPError(400, "from.amount_cents must be an integer and from.currency_code a string")
    return amount, code.upper(), to_code.upper()


def build_app(rates: dict[str, Decimal]) -> App:
    app = App(SERVICE)

    @app.route("GET", "/currencies")
    def currencies(_req: Request) -> Any:
        return {"currency_codes": sorted(rates)}

    @app.route("POST", "/convert")
    def convert_route(req: Request) -> Any:
        amount, from_code, to_code = parse_convert(req.json())
        converted = convert(rates, amount, from_code, to_code)
        return {"currency_code": to_code, "amount_cents": converted}

    return app


def main() -> None:
    build_app(load_rates()).run()


if __name__ == "__main__":
    main()
