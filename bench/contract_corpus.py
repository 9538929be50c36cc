"""A realistic, seeded corpus of tool calls for the outcome-contract benchmark.

Seven tools of the kinds agents call (quotes, weather, flights, orders, currency
conversion, user profiles, a text page fetch), each result shaped the way real
APIs shape them: optional fields, nulls, empty and varying arrays, whole numbers
written as integers now and then, arguments echoed in different case, sums that
conserve money.  Everything is generated in memory from a seed, so the corpus is
the same on every run and nothing large is committed.

``inject`` corrupts a clean result with one fault of a named class.  It knows
the tools' shapes from the generator below, never from mined contracts, so the
benchmark does not grade the miner against itself.

    python bench/contract_corpus.py --per-tool 300 > calls.jsonl
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import string
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Call = dict[str, Any]
Path = tuple[str, ...]

# -- vocabularies --

TICKERS = {
    "AAPL": ("NASDAQ", "USD", 190.0),
    "MSFT": ("NASDAQ", "USD", 410.0),
    "GOOGL": ("NASDAQ", "USD", 160.0),
    "AMZN": ("NASDAQ", "USD", 180.0),
    "NVDA": ("NASDAQ", "USD", 120.0),
    "META": ("NASDAQ", "USD", 500.0),
    "TSLA": ("NASDAQ", "USD", 240.0),
    "JPM": ("NYSE", "USD", 200.0),
    "V": ("NYSE", "USD", 280.0),
    "KO": ("NYSE", "USD", 62.0),
    "PFE": ("NYSE", "USD", 28.0),
    "XOM": ("NYSE", "USD", 115.0),
    "DIS": ("NYSE", "USD", 95.0),
    "SPY": ("NYSE", "USD", 520.0),
    "SAP": ("XETRA", "EUR", 180.0),
    "SIE": ("XETRA", "EUR", 175.0),
    "ALV": ("XETRA", "EUR", 260.0),
    "BMW": ("XETRA", "EUR", 95.0),
    "SHEL": ("LSE", "GBP", 27.0),
    "HSBA": ("LSE", "GBP", 6.8),
    "BP": ("LSE", "GBP", 4.9),
    "ULVR": ("LSE", "GBP", 41.0),
}
ETFS = frozenset({"SPY"})
MARKET_STATES = ("REGULAR", "REGULAR", "REGULAR", "PRE", "POST", "CLOSED")

CITIES = [
    ("Paris", "FR", 48.86, 2.35),
    ("Berlin", "DE", 52.52, 13.40),
    ("Madrid", "ES", 40.42, -3.70),
    ("Rome", "IT", 41.90, 12.50),
    ("London", "GB", 51.51, -0.13),
    ("Dublin", "IE", 53.35, -6.26),
    ("Oslo", "NO", 59.91, 10.75),
    ("Helsinki", "FI", 60.17, 24.94),
    ("Warsaw", "PL", 52.23, 21.01),
    ("Vienna", "AT", 48.21, 16.37),
    ("New York", "US", 40.71, -74.01),
    ("Chicago", "US", 41.88, -87.63),
    ("Denver", "US", 39.74, -104.99),
    ("Seattle", "US", 47.61, -122.33),
    ("Miami", "US", 25.76, -80.19),
    ("Toronto", "CA", 43.65, -79.38),
    ("Mexico City", "MX", 19.43, -99.13),
    ("São Paulo", "BR", -23.55, -46.63),
    ("Buenos Aires", "AR", -34.60, -58.38),
    ("Cairo", "EG", 30.04, 31.24),
    ("Nairobi", "KE", -1.29, 36.82),
    ("Mumbai", "IN", 19.08, 72.88),
    ("Singapore", "SG", 1.35, 103.82),
    ("Tokyo", "JP", 35.68, 139.69),
    ("Seoul", "KR", 37.57, 126.98),
    ("Sydney", "AU", -33.87, 151.21),
    ("Auckland", "NZ", -36.85, 174.76),
    ("Reykjavík", "IS", 64.15, -21.94),
]
CONDITIONS = ("clear", "clouds", "clouds", "rain", "drizzle", "snow", "fog", "thunderstorm")
ALERT_EVENTS = ("wind", "heat", "frost", "flood", "storm")
SEVERITIES = ("minor", "moderate", "severe")

AIRPORTS = [
    "JFK",
    "LAX",
    "SFO",
    "ORD",
    "ATL",
    "DFW",
    "SEA",
    "BOS",
    "MIA",
    "DEN",
    "LHR",
    "CDG",
    "FRA",
    "AMS",
    "MAD",
    "FCO",
    "NRT",
    "HND",
    "SIN",
    "DXB",
]
CARRIERS = {
    "UA": "United",
    "AA": "American",
    "DL": "Delta",
    "BA": "British Airways",
    "AF": "Air France",
    "LH": "Lufthansa",
    "KL": "KLM",
    "EK": "Emirates",
}
CABINS = ("economy", "economy", "economy", "premium_economy", "business")

PRODUCTS = [
    ("Wireless Mouse", 24.99),
    ("Mechanical Keyboard", 89.5),
    ("USB-C Hub", 39.0),
    ("Laptop Stand", 45.0),
    ("Noise Cancelling Headphones", 199.99),
    ("Water Bottle", 18.0),
    ("Desk Lamp", 32.75),
    ("Notebook Set", 12.5),
    ("Backpack", 64.0),
    ("Running Shoes", 110.0),
    ("Yoga Mat", 28.99),
    ("Coffee Grinder", 54.95),
    ("Phone Case", 15.99),
    ("Monitor 27in", 279.0),
    ("Webcam", 69.99),
]
ORDER_STATUS = ("pending", "processed", "shipped", "shipped", "delivered", "delivered", "cancelled")
PAYMENT_METHODS = ("credit_card", "credit_card", "paypal", "gift_card")
US_STATES = {"CA": 0.0725, "NY": 0.04, "TX": 0.0625, "WA": 0.065, "FL": 0.06, "OR": 0.0}
TRACKING_CARRIERS = ("UPS", "FedEx", "USPS", "DHL")

CURRENCIES = {
    "USD": 1.0,
    "EUR": 0.92,
    "GBP": 0.79,
    "JPY": 151.3,
    "CHF": 0.9,
    "CAD": 1.36,
    "AUD": 1.52,
    "SEK": 10.6,
}

PLANS = {
    "free": (1, 1024),
    "education": (1, 10240),
    "pro": (1, 51200),
    "team": (5, 204800),
    "enterprise": (25, 1048576),
}
LOCALES = ("en-US", "en-GB", "de-DE", "fr-FR", "es-ES", "ja-JP", "pt-BR", "it-IT")
THEMES = ("light", "dark", "system")
TIMEZONES = [
    "UTC",
    "Europe/Paris",
    "Europe/Berlin",
    "America/New_York",
    "America/Chicago",
    "America/Los_Angeles",
    "Asia/Tokyo",
    "Asia/Singapore",
    "Australia/Sydney",
    "Europe/London",
    "America/Sao_Paulo",
    "Asia/Kolkata",
]
FIRST = "ana ben chloe dev emma farid gina hugo ines jon kira liam maya noah omar pia raj sara tom"
LAST = "smith garcia müller rossi kim nguyen okafor silva dubois ivanova haddad larsen tanaka"
WORDS = [
    "the",
    "system",
    "returns",
    "a",
    "value",
    "for",
    "each",
    "request",
    "and",
    "the",
    "agent",
    "uses",
    "it",
    "to",
    "plan",
    "the",
    "next",
    "step",
    "when",
    "data",
    "arrives",
    "late",
    "or",
    "incomplete",
    "the",
    "plan",
    "must",
    "change",
    "careful",
    "checks",
    "help",
    "reports",
    "show",
    "totals",
    "by",
    "region",
    "and",
    "month",
    "while",
    "archives",
    "keep",
    "older",
    "records",
]


def _iso(rng: random.Random, year: int = 2026) -> str:
    return (
        f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T"
        f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z"
    )


def _money(value: float) -> float | int:
    """Some APIs write 12.0 as 12: JSON writers differ, and contracts must not care."""
    rounded = round(float(value), 2)
    return int(rounded) if rounded.is_integer() else rounded


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


# -- tools --


def stock_quote(rng: random.Random) -> Call:
    symbol = rng.choice(list(TICKERS))
    exchange, currency, base = TICKERS[symbol]
    prev = round(base * rng.uniform(0.85, 1.15), 2)
    price = round(prev * rng.uniform(0.95, 1.05), 2)
    change = round(price - prev, 2)
    low = round(min(price, prev) * rng.uniform(0.97, 1.0), 2)
    high = round(max(price, prev) * rng.uniform(1.0, 1.03), 2)
    result: dict[str, Any] = {
        "symbol": symbol,
        "exchange": exchange,
        "currency": currency,
        "price": price,
        "previous_close": prev,
        "change": change,
        "change_percent": round(change / prev * 100, 2),
        "day_range": {"low": low, "high": high},
        "volume": 0 if rng.random() < 0.005 else rng.randint(50_000, 90_000_000),
        "market_cap": None if symbol in ETFS else rng.randint(5, 3000) * 1_000_000_000,
        "market_state": "HALTED" if rng.random() < 0.004 else rng.choice(MARKET_STATES),
        "timestamp": _iso(rng),
    }
    if symbol not in ETFS and rng.random() < 0.7:
        result["dividend_yield"] = round(rng.uniform(0.3, 6.0), 2)
    arg = symbol if rng.random() < 0.8 else symbol.lower()
    return {"tool": "get_stock_quote", "arguments": {"symbol": arg}, "result": result}


def weather(rng: random.Random) -> Call:
    city, country, lat, lon = rng.choice(CITIES)
    units = rng.choice(("metric", "metric", "imperial"))
    temp_c = round(rng.gauss(14 - abs(lat) / 6, 9), 1)
    temp = temp_c if units == "metric" else round(temp_c * 1.8 + 32, 1)
    wind = 0.0 if rng.random() < 0.05 else round(rng.uniform(0.5, 60), 1)
    alerts = []
    for _ in range(rng.choice((0, 0, 0, 0, 1, 1, 2))):
        alerts.append(
            {
                "event": rng.choice(ALERT_EVENTS),
                "severity": rng.choice(SEVERITIES),
                "expires": _iso(rng),
            }
        )
    result = {
        "location": {"city": city, "country": country, "lat": lat, "lon": lon},
        "units": units,
        "temperature": temp,
        "feels_like": round(temp - rng.uniform(0, 4), 1),
        "humidity": rng.randint(8, 100),
        "pressure_hpa": rng.randint(975, 1042),
        "wind": {"speed": wind, "direction": rng.randint(0, 359)},
        "condition": "smoke" if rng.random() < 0.003 else rng.choice(CONDITIONS),
        "observed_at": _iso(rng),
        "alerts": alerts,
    }
    city_arg = city if rng.random() < 0.85 else city.lower()
    return {
        "tool": "get_weather",
        "arguments": {"city": city_arg, "units": units},
        "result": result,
    }


def flights(rng: random.Random) -> Call:
    origin, destination = rng.sample(AIRPORTS, 2)
    date = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    offers = []
    for _ in range(rng.choice((0, 1, 2, 3, 3, 4, 5, 6, 8))):
        code = rng.choice(list(CARRIERS))
        duration = rng.randint(55, 900)
        offers.append(
            {
                "flight_number": f"{code}{rng.randint(10, 9999)}",
                "carrier": CARRIERS[code],
                "departure": f"{date}T{rng.randint(0, 23):02d}:{rng.choice((0, 15, 30, 45)):02d}",
                "duration_minutes": duration,
                "stops": rng.choice((0, 0, 0, 1, 1, 2)),
                "cabin": "first" if rng.random() < 0.002 else rng.choice(CABINS),
                "price": {"amount": _money(rng.uniform(79, 2400)), "currency": "USD"},
                "seats_left": rng.randint(1, 9),
            }
        )
    result = {
        "search_id": _hex(rng, 16),
        "origin": origin,
        "destination": destination,
        "date": date,
        "currency": "USD",
        "count": len(offers),
        "results": offers,
    }
    if rng.random() < 0.01:
        result["warnings"] = ["Schedule change: some departure times may differ."]
    arguments = {"origin": origin, "destination": destination, "date": date}
    return {"tool": "search_flights", "arguments": arguments, "result": result}


def order(rng: random.Random) -> Call:
    order_id = f"#W{rng.randint(1_000_000, 9_999_999)}"
    items = []
    for _ in range(rng.randint(1, 5)):
        name, price = rng.choice(PRODUCTS)
        items.append(
            {
                "item_id": str(rng.randint(10**9, 10**10 - 1)),
                "name": name,
                "price": _money(price),
                "quantity": rng.choice((1, 1, 1, 2, 3)),
            }
        )
    subtotal = round(sum(float(i["price"]) * int(i["quantity"]) for i in items), 2)
    state = rng.choice(list(US_STATES))
    tax = round(subtotal * US_STATES[state], 2)
    shipping = rng.choice((0.0, 0.0, 5.99, 12.99))
    total = round(subtotal + tax + shipping, 2)
    usual = rng.choice(ORDER_STATUS)
    status = rng.choices((usual, "exchanged", "return_requested"), (990, 7, 3))[0]
    method = rng.choice(PAYMENT_METHODS)
    payment: dict[str, Any] = {"method": method, "amount": _money(total)}
    if method == "credit_card":
        payment["last4"] = f"{rng.randint(0, 9999):04d}"
    result: dict[str, Any] = {
        "order_id": order_id,
        "status": status,
        "created_at": _iso(rng),
        "items": items,
        "subtotal": _money(subtotal),
        "tax": _money(tax),
        "shipping": _money(shipping),
        "total": _money(total),
        "payment": payment,
        "shipping_address": {
            "city": rng.choice(CITIES)[0],
            "state": state,
            "zip": f"{rng.randint(10000, 99999)}",
        },
    }
    if status in ("shipped", "delivered"):
        result["tracking"] = {
            "carrier": rng.choice(TRACKING_CARRIERS),
            "number": "".join(
                rng.choice(string.ascii_uppercase + string.digits) for _ in range(12)
            ),
        }
    return {"tool": "get_order", "arguments": {"order_id": order_id}, "result": result}


def convert(rng: random.Random) -> Call:
    source, target = rng.sample(list(CURRENCIES), 2)
    amount = (
        rng.choice((10, 20, 50, 100, 250, 1000))
        if rng.random() < 0.4
        else round(rng.uniform(1, 5000), 2)
    )
    rate = round(CURRENCIES[target] / CURRENCIES[source] * rng.uniform(0.98, 1.02), 6)
    result = {
        "from": source,
        "to": target,
        "amount": amount,
        "rate": rate,
        "result": round(amount * rate, 2),
        "timestamp": rng.randint(1_767_225_600, 1_798_761_600),
        "source": "ECB-delayed" if rng.random() < 0.005 else rng.choice(("ECB", "ECB", "fixer")),
    }
    arguments = {
        "amount": amount,
        "from_currency": source if rng.random() < 0.9 else source.lower(),
        "to_currency": target,
    }
    return {"tool": "convert_currency", "arguments": arguments, "result": result}


def user(rng: random.Random) -> Call:
    user_id = f"u_{_hex(rng, 10)}"
    first, last = rng.choice(FIRST.split()), rng.choice(LAST.split())
    plan = (
        "education"
        if rng.random() < 0.005
        else rng.choice(("free", "free", "pro", "pro", "team", "enterprise"))
    )
    seats, quota = PLANS[plan]
    if plan in ("team", "enterprise"):
        seats = seats * rng.randint(1, 8)
    result: dict[str, Any] = {
        "id": user_id,
        "username": f"{first}{rng.randint(1, 999)}",
        "display_name": f"{first.title()} {last.title()}",
        "email": f"{first}.{last}@example.com",
        "plan": plan,
        "seats": seats,
        "created_at": _iso(rng, rng.randint(2019, 2026)),
        "last_login": None if rng.random() < 0.1 else _iso(rng),
        "settings": {
            "theme": rng.choice(THEMES),
            "locale": "ko-KR" if rng.random() < 0.005 else rng.choice(LOCALES),
            "timezone": rng.choice(TIMEZONES),
            "notifications": {"email": rng.random() < 0.7, "push": rng.random() < 0.4},
        },
        "usage": {
            "storage_used_mb": 0 if rng.random() < 0.08 else round(rng.uniform(0.1, quota), 1),
            "storage_quota_mb": quota,
            "api_calls_month": rng.choice((0, rng.randint(1, 50_000))),
        },
    }
    if rng.random() < 0.35:
        result["company"] = rng.choice(("Acme", "Globex", "Initech", "Umbrella", "Hooli"))
    if rng.random() < 0.6:
        result["avatar_url"] = f"https://cdn.example.com/a/{_hex(rng, 12)}.png"
    return {"tool": "get_user", "arguments": {"user_id": user_id}, "result": result}


def page(rng: random.Random) -> Call:
    slug = "-".join(rng.sample(WORDS, 3))
    title = " ".join(rng.sample(WORDS, 4)).capitalize()
    paragraphs = [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 80))).capitalize() + "."
        for _ in range(rng.randint(1, 5))
    ]
    text = f"# {title}\n\n" + "\n\n".join(paragraphs)
    url = f"https://docs.example.com/{slug}"
    return {"tool": "fetch_page", "arguments": {"url": url}, "result": text}


GENERATORS: dict[str, Callable[[random.Random], Call]] = {
    "get_stock_quote": stock_quote,
    "get_weather": weather,
    "search_flights": flights,
    "get_order": order,
    "convert_currency": convert,
    "get_user": user,
    "fetch_page": page,
}

SUBSTITUTES = {
    "get_stock_quote": ["get_stock_quote_alpha_vantage", "get_stock_quote"],
    "get_weather": ["get_weather_visualcrossing", "get_weather"],
    "search_flights": ["search_flights_kayak", "get_flight_status"],
    "get_order": ["get_order_history", "get_order"],
    "convert_currency": ["get_exchange_rate", "convert_currency"],
    "get_user": ["search_users", "get_user"],
    "fetch_page": ["fetch_page_cached", "web_search"],
}


def corpus(seed: int = 20260718, per_tool: int = 500) -> dict[str, list[Call]]:
    """``per_tool`` calls for each tool, the same for the same seed."""
    out: dict[str, list[Call]] = {}
    for index, (tool, generate) in enumerate(GENERATORS.items()):
        rng = random.Random(seed * 1009 + index)
        out[tool] = [generate(rng) for _ in range(per_tool)]
    return out


# -- fault injection --

CLASSES = (
    "missing_learned_field",
    "unexpected_field",
    "learned_type_mismatch",
    "unseen_category",
    "nonpositive_value",
    "learned_echo_mismatch",
    "affine_relation_broken",
    "explicit_error",
)
BOUNDARY = ("stale_timestamp", "truncated_array", "id_substitution", "plausible_text")
"""Incident-style faults outside the contract vocabulary: the paper's detection boundary."""


@dataclass(frozen=True)
class Shape:
    """What the generator guarantees about one tool's results, for the injector."""

    required: tuple[Path, ...] = ()
    categorical: tuple[tuple[Path, tuple[str, ...]], ...] = ()
    positive: tuple[Path, ...] = ()
    echoes: tuple[tuple[Path, str], ...] = ()
    relations: tuple[Path, ...] = ()
    typed: tuple[Path, ...] = ()
    text: bool = False
    timestamps: tuple[Path, ...] = ()
    arrays: tuple[Path, ...] = ()
    ids: tuple[Path, ...] = ()
    texts: tuple[Path, ...] = ()
    extras: tuple[tuple[str, Any], ...] = field(
        default=(
            ("debug_trace", {"node": "api-7", "took_ms": 41}),
            ("deprecated", "This endpoint version is deprecated"),
            ("cached_copy", True),
            ("next_page_token", "eyJvZmZzZXQiOjUwfQ"),
        )
    )


SHAPES: dict[str, Shape] = {
    "get_stock_quote": Shape(
        required=(("price",), ("currency",), ("previous_close",), ("exchange",), ("volume",)),
        categorical=(
            (("currency",), ("XAU", "USX", "GBp")),
            (("exchange",), ("OTC", "BATS")),
            (("market_state",), ("HALTED", "UNKNOWN")),
        ),
        positive=(("price",), ("previous_close",), ("volume",), ("day_range", "low")),
        echoes=((("symbol",), "symbol"),),
        relations=(("change",), ("price",), ("previous_close",)),
        typed=(("price",), ("volume",), ("day_range",), ("change",)),
        timestamps=(("timestamp",),),
    ),
    "get_weather": Shape(
        required=(("temperature",), ("condition",), ("humidity",), ("location",), ("wind",)),
        categorical=(
            (("condition",), ("hail", "sandstorm", "n/a")),
            (("units",), ("kelvin", "standard")),
        ),
        positive=(("humidity",), ("pressure_hpa",)),
        echoes=((("location", "city"), "city"),),
        typed=(("temperature",), ("humidity",), ("wind", "speed"), ("alerts",)),
        timestamps=(("observed_at",),),
        arrays=(("alerts",),),
    ),
    "search_flights": Shape(
        required=(("results",), ("count",), ("origin",), ("destination",)),
        categorical=(
            (("results", "[]", "cabin"), ("coach_plus", "standby")),
            (("results", "[]", "carrier"), ("Ryanair", "Aeroflot")),
            (("currency",), ("EUR", "GBP")),
        ),
        positive=(
            ("results", "[]", "price", "amount"),
            ("results", "[]", "duration_minutes"),
            ("results", "[]", "seats_left"),
        ),
        echoes=((("origin",), "origin"), (("destination",), "destination"), (("date",), "date")),
        typed=(("count",), ("results",), ("results", "[]", "price", "amount")),
        arrays=(("results",),),
        ids=(("search_id",), ("results", "[]", "flight_number")),
    ),
    "get_order": Shape(
        required=(("status",), ("items",), ("total",), ("payment",), ("subtotal",)),
        categorical=(
            (("status",), ("lost", "refunded_partial", "on_hold")),
            (("payment", "method"), ("crypto", "bank_transfer")),
        ),
        positive=(("subtotal",), ("total",), ("items", "[]", "price"), ("items", "[]", "quantity")),
        echoes=((("order_id",), "order_id"),),
        relations=(("total",), ("subtotal",), ("tax",), ("payment", "amount")),
        typed=(("total",), ("items",), ("payment",), ("items", "[]", "quantity")),
        timestamps=(("created_at",),),
        arrays=(("items",),),
        ids=(("items", "[]", "item_id"), ("tracking", "number")),
        texts=(("items", "[]", "name"),),
    ),
    "convert_currency": Shape(
        required=(("rate",), ("result",), ("from",), ("to",)),
        categorical=((("source",), ("manual", "cache")),),
        positive=(("rate",), ("timestamp",)),
        echoes=((("from",), "from_currency"), (("to",), "to_currency"), (("amount",), "amount")),
        typed=(("rate",), ("result",), ("timestamp",)),
        timestamps=(("timestamp",),),
    ),
    "get_user": Shape(
        required=(("id",), ("plan",), ("email",), ("settings",), ("seats",)),
        categorical=(
            (("plan",), ("trial", "legacy")),
            (("settings", "theme"), ("solarized",)),
            (("settings", "locale"), ("xx-XX", "en")),
        ),
        positive=(("seats",), ("usage", "storage_quota_mb")),
        echoes=((("id",), "user_id"),),
        typed=(("seats",), ("settings",), ("settings", "notifications", "email"), ("usage",)),
        timestamps=(("last_login",),),
        ids=(("username",),),
        texts=(("display_name",), ("email",)),
    ),
    "fetch_page": Shape(text=True),
}

ERROR_BODIES: tuple[Any, ...] = (
    {"error": "Rate limit exceeded. Try again in 60 seconds."},
    {"Error": "invalid ident, please provide a valid ident."},
    {"success": False, "message": "Upstream service unavailable"},
    {"error": {"code": 503, "message": "Service Unavailable"}},
)
ERROR_PAGES = (
    "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head>"
    "<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>",
    "<html><head><title>Service Unavailable</title></head><body>The server is temporarily "
    "unable to service your request.</body></html>",
    "Error: upstream request timed out after 30000 ms",
)


def _locate(value: Any, path: Path, rng: random.Random) -> tuple[Any, str | int] | None:
    """The container and key of one node at ``path``; ``[]`` picks a random element."""
    node: Any = value
    parent: Any = None
    key: str | int | None = None
    for part in path:
        if part == "[]":
            if not isinstance(node, list) or not node:
                return None
            parent, key = node, rng.randrange(len(node))
        else:
            if not isinstance(node, dict) or part not in node:
                return None
            parent, key = node, part
        node = parent[key]
    if parent is None or key is None:
        return None
    return parent, key


def _set(value: Any, path: Path, rng: random.Random, change: Callable[[Any], Any]) -> bool:
    found = _locate(value, path, rng)
    if found is None:
        return False
    parent, key = found
    new = change(parent[key])
    if new is _SKIP:
        return False
    parent[key] = new
    return True


_SKIP = object()


def _flip(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dict | list):
        return None if len(value) % 2 else json.dumps(value)[:40]
    return _SKIP


def inject(call: Call, fault: str, rng: random.Random) -> Call | None:
    """A copy of ``call`` with one fault of class ``fault``; ``None`` when none applies."""
    shape = SHAPES[call["tool"]]
    out = copy.deepcopy(call)
    result = out["result"]
    if shape.text:
        if fault != "explicit_error":
            return None
        out["result"] = rng.choice(ERROR_PAGES)
        return out
    done = False
    if fault == "missing_learned_field":
        key = rng.choice(shape.required)[0]
        if key in result:
            del result[key]
            done = True
    elif fault == "unexpected_field":
        name, value = rng.choice(shape.extras)
        result[name] = value
        done = True
    elif fault == "learned_type_mismatch" and shape.typed:
        done = _set(result, rng.choice(shape.typed), rng, _flip)
    elif fault == "unseen_category" and shape.categorical:
        path, novel = rng.choice(shape.categorical)
        done = _set(result, path, rng, lambda _: rng.choice(novel))
    elif fault == "nonpositive_value" and shape.positive:
        done = _set(result, rng.choice(shape.positive), rng, lambda _: rng.choice((0, -1, -12.5)))
    elif fault == "learned_echo_mismatch" and shape.echoes:
        path, argument = rng.choice(shape.echoes)
        original = call["arguments"].get(argument)

        def other(value: Any) -> Any:
            if isinstance(value, int | float):
                return round(value * rng.choice((0.5, 2, 10)) + 1, 2)
            pool = [
                c
                for c in _ECHO_POOL.get(call["tool"], ())
                if str(c).lower() != str(original).lower()
            ]
            return rng.choice(pool) if pool else value + "X"

        done = _set(result, path, rng, other)
    elif fault == "affine_relation_broken" and shape.relations:
        done = _set(
            result,
            rng.choice(shape.relations),
            rng,
            lambda v: (
                _money(v + rng.choice((1, 5.5, 10, 0.25))) if isinstance(v, int | float) else _SKIP
            ),
        )
    elif fault == "explicit_error":
        body = copy.deepcopy(rng.choice(ERROR_BODIES))
        if rng.random() < 0.5:
            out["result"] = body
        else:
            result.update(body)
        done = True
    elif fault in BOUNDARY:
        done = _boundary(result, shape, fault, rng)
    return out if done else None


def _stale(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return value - 86_400 * 400
    if isinstance(value, str) and value[:4].isdigit():
        return "2019" + value[4:]
    return _SKIP


def _boundary(result: Any, shape: Shape, fault: str, rng: random.Random) -> bool:
    if fault == "stale_timestamp" and shape.timestamps:
        return _set(result, rng.choice(shape.timestamps), rng, _stale)
    if fault == "truncated_array" and shape.arrays:
        return _set(
            result,
            rng.choice(shape.arrays),
            rng,
            lambda v: v[:1] if isinstance(v, list) and len(v) > 1 else _SKIP,
        )
    if fault == "id_substitution" and shape.ids:
        return _set(
            result,
            rng.choice(shape.ids),
            rng,
            lambda v: v[::-1] if isinstance(v, str) and len(set(v)) > 1 else _SKIP,
        )
    if fault == "plausible_text" and shape.texts:
        return _set(
            result,
            rng.choice(shape.texts),
            rng,
            lambda v: rng.choice(("undefined", "[object Object]", "N/A", "")) if v else _SKIP,
        )
    return False


_ECHO_POOL: dict[str, list[Any]] = {
    "get_stock_quote": list(TICKERS),
    "get_weather": [c[0] for c in CITIES],
    "search_flights": [*AIRPORTS, "2026-13-01", "2025-01-01"],
    "get_order": ["#W0000001", "#W1234567"],
    "convert_currency": list(CURRENCIES),
    "get_user": ["u_0000000000", "u_deadbeef00"],
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=20260718)
    parser.add_argument("--per-tool", type=int, default=300)
    args = parser.parse_args()
    for calls in corpus(args.seed, args.per_tool).values():
        for call in calls:
            sys.stdout.write(json.dumps(call, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
