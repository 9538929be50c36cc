"""Mine outcome contracts from recorded successful tool results.

Mining is conservative in the way the paper's is: an invariant is admitted only
if it holds on every recorded result and has a minimum support, so that on
clean traffic a contract stays silent.  Where a property could be an accident
of a small sample (a map keyed by ids, a field echoing whatever the caller
asked, a few free-text values) the miner asks for more evidence than one
sighting: a key set is closed, or a categorical domain admitted, only when few
members were seen just once (a Good-Turing estimate of the unseen mass, which
is the rate at which the invariant would fire on clean results).
Mining is deterministic: the same records give the same contracts, byte for byte.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ._contract import Affine, Contracts, Echo, ObjectRule, ToolContract
from ._values import (
    MAX_DEPTH,
    MAX_ITEMS,
    ROOT,
    child,
    element,
    error_fields,
    is_number,
    looks_failed,
    parse_arguments,
    parse_result,
    type_name,
)

__all__ = ["Miner", "MiningOptions", "mine"]

log = logging.getLogger("toolmend.contracts")


@dataclass(frozen=True, slots=True)
class MiningOptions:
    """How much evidence each invariant class needs before it is admitted.

    Attributes:
        category_support: Recorded results a categorical domain needs.
        max_categories: Distinct values a categorical domain may have at most.
        max_affine_terms: Fields an affine relation may combine at most.
    """

    min_support: int = 20
    """Recorded results a path must occur in before any invariant about it is admitted."""
    category_support: int = 30
    max_categories: int = 16
    max_unseen_mass: float = 0.005
    """The Good-Turing estimate of unseen values (singletons / occurrences) a categorical
    domain or a closed key set may have: the rate at which it would fire on clean results."""
    min_echo_values: int = 3
    """Distinct argument values an echo must hold across, so that a constant is not an echo."""
    min_affine_distinct: int = 5
    """Distinct rows of a relation's inputs: a relation through a few points proves nothing."""
    max_affine_terms: int = 3
    affine_budget: int = 2000
    """Candidate relations tried per size; the best-supported fields are tried first."""
    fit_tolerance: float = 1e-9
    """Relative residual an affine relation may have on the recorded results."""


class _Path:
    __slots__ = (
        "categories",
        "count",
        "last",
        "numbers",
        "positive",
        "samples",
        "strings",
        "types",
    )

    def __init__(self) -> None:
        self.count = 0
        self.samples = 0
        self.last = -1
        self.types: set[str] = set()
        self.numbers = 0
        self.positive = True
        self.strings = 0
        self.categories: dict[str, int] | None = {}


class _Object:
    __slots__ = ("count", "keys", "last", "samples")

    def __init__(self) -> None:
        self.count = 0
        self.samples = 0
        self.last = -1
        self.keys: dict[str, int] = {}


class _EchoPair:
    __slots__ = ("count", "exact", "fold", "values")

    def __init__(self) -> None:
        self.count = 0
        self.exact = True
        self.fold = True
        self.values: set[Any] = set()


class _Tool:
    """Everything seen of one tool's results, reduced to what the invariants need."""

    def __init__(self, options: MiningOptions) -> None:
        self.options = options
        self.samples = 0
        self.skipped = 0
        self.erroneous = 0
        self.paths: dict[str, _Path] = {}
        self.objects: dict[str, _Object] = {}
        self.rows: list[dict[str, float]] = []
        self.echo: dict[tuple[str, str], _EchoPair] = {}
        self.dead: set[tuple[str, str]] = set()

    def add(self, arguments: Mapping[str, Any], value: Any, erroneous: bool) -> None:
        sid = self.samples
        self.samples += 1
        if erroneous:
            self.erroneous += 1
        flat: dict[str, Any] = {}
        self._walk(value, ROOT, 0, flat, sid)
        self.rows.append({p: float(v) for p, v in flat.items() if is_number(v)})
        self._echo(arguments, flat)

    def _walk(
        self, value: Any, path: str, depth: int, flat: dict[str, Any] | None, sid: int
    ) -> None:
        stats = self.paths.get(path)
        if stats is None:
            stats = self.paths[path] = _Path()
        stats.count += 1
        if stats.last != sid:
            stats.last = sid
            stats.samples += 1
        kind = type_name(value)
        stats.types.add(kind)
        if kind == "object":
            obj = self.objects.get(path)
            if obj is None:
                obj = self.objects[path] = _Object()
            obj.count += 1
            if obj.last != sid:
                obj.last = sid
                obj.samples += 1
            keys = obj.keys
            for key, item in value.items():
                name = key if type(key) is str else str(key)
                keys[name] = keys.get(name, 0) + 1
                if depth < MAX_DEPTH:
                    self._walk(item, child(path, name), depth + 1, flat, sid)
        elif kind == "array":
            if depth < MAX_DEPTH:
                inner = element(path)
                for item in value[:MAX_ITEMS]:
                    self._walk(item, inner, depth + 1, None, sid)
        elif kind == "string":
            stats.strings += 1
            cats = stats.categories
            if cats is not None:
                cats[value] = cats.get(value, 0) + 1
                if len(cats) > self.options.max_categories:
                    stats.categories = None
            if flat is not None:
                flat[path] = value
        elif kind == "integer" or kind == "number":
            stats.numbers += 1
            if not value > 0:
                stats.positive = False
            if flat is not None:
                flat[path] = value

    def _echo(self, arguments: Mapping[str, Any], flat: Mapping[str, Any]) -> None:
        args = [(str(k), v) for k, v in arguments.items() if isinstance(v, str) or is_number(v)]
        if not args:
            return
        dead = self.dead
        pairs = self.echo
        for path, observed in flat.items():
            for name, argument in args:
                key = (path, name)
                if key in dead:
                    continue
                exact = type(observed) is type(argument) and observed == argument
                if not exact and is_number(observed) and is_number(argument):
                    exact = observed == argument
                fold = exact or (
                    isinstance(observed, str)
                    and isinstance(argument, str)
                    and observed.casefold() == argument.casefold()
                )
                if not fold:
                    dead.add(key)
                    pairs.pop(key, None)
                    continue
                pair = pairs.get(key)
                if pair is None:
                    pair = pairs[key] = _EchoPair()
                pair.count += 1
                pair.exact = pair.exact and exact
                if len(pair.values) < self.options.min_echo_values:
                    pair.values.add(argument)

    def contract(self, tool: str) -> ToolContract:
        o = self.options
        support: dict[str, int] = {}
        types: dict[str, frozenset[str]] = {}
        positive: set[str] = set()
        for path, stats in self.paths.items():
            if stats.samples < o.min_support:
                continue
            support[path] = stats.samples
            seen = set(stats.types)
            if "integer" in seen and "number" in seen:
                seen.discard("integer")
            if "unknown" not in seen:
                types[path] = frozenset(seen)
            if stats.numbers >= o.min_support and stats.positive:
                positive.add(path)
        objects = {
            path: self._object_rule(obj)
            for path, obj in self.objects.items()
            if obj.samples >= o.min_support
        }
        echoes = tuple(
            Echo(path, name, not pair.exact, pair.count)
            for (path, name), pair in sorted(self.echo.items())
            if pair.count >= o.min_support and len(pair.values) >= o.min_echo_values
        )
        echoed = {e.path for e in echoes}
        domains: dict[str, frozenset[str]] = {}
        for path, stats in self.paths.items():
            cats = stats.categories
            if (
                cats
                and path not in echoed
                and stats.samples >= o.category_support
                and stats.types <= {"string", "null"}
                and stats.strings >= o.category_support
                and _unseen(cats.values(), stats.strings) <= o.max_unseen_mass
            ):
                domains[path] = frozenset(cats)
        return ToolContract(
            tool=tool,
            samples=self.samples,
            objects=objects,
            types=types,
            domains=domains,
            positive=frozenset(positive),
            echoes=echoes,
            affine=self._affine(),
            error_free=self.samples >= o.min_support and self.erroneous == 0,
            support=support,
        )

    def _object_rule(self, obj: _Object) -> ObjectRule:
        required = frozenset(k for k, n in obj.keys.items() if n == obj.count)
        closed = _unseen(obj.keys.values(), obj.count) <= self.options.max_unseen_mass
        return ObjectRule(required, frozenset(obj.keys) if closed else None, obj.samples)

    def _affine(self) -> tuple[Affine, ...]:
        o = self.options
        candidates = []
        for path, stats in self.paths.items():
            if stats.samples < o.min_support or not stats.numbers or "[]" in path:
                continue
            distinct: set[float] = set()
            for row in self.rows:
                value = row.get(path)
                if value is not None:
                    distinct.add(value)
                    if len(distinct) >= 2:
                        candidates.append((-stats.samples, path.count("."), path))
                        break
        ranked = [p for _, _, p in sorted(candidates)]
        found: list[Affine] = []
        related: set[frozenset[str]] = set()
        groups: dict[str, str] = {}
        for size in range(2, o.max_affine_terms + 2):
            if size == 3:
                ranked = _without_aliases(ranked, found)
            count = len(ranked)
            while count > size and math.comb(count, size) > o.affine_budget:
                count -= 1
            for combo in itertools.combinations(sorted(ranked[:count]), size):
                if size == 2 and _group(groups, combo[0]) == _group(groups, combo[1]):
                    continue
                if any(
                    frozenset(part) in related
                    for smaller in range(2, size)
                    for part in itertools.combinations(combo, smaller)
                ):
                    continue
                relation = _fit(self.rows, combo[-1], combo[:-1], o)
                if relation is not None:
                    found.append(relation)
                    related.add(frozenset(combo))
                    if size == 2:
                        groups[_group(groups, combo[0])] = _group(groups, combo[1])
        return tuple(found)


def _group(groups: dict[str, str], path: str) -> str:
    """The representative of the fields already known to be affine in ``path``."""
    while path in groups:
        path = groups[path]
    return path


def _without_aliases(ranked: list[str], pairs: list[Affine]) -> list[str]:
    """Drop fields that are affine in a better-ranked field: they would only restate relations."""
    rank = {p: i for i, p in enumerate(ranked)}
    dropped = set()
    for a in pairs:
        (x, _), y = a.terms[0], a.target
        dropped.add(max(x, y, key=rank.__getitem__))
    return [p for p in ranked if p not in dropped]


def _unseen(counts: Iterable[int], total: int) -> float:
    """Good-Turing: the chance that the next occurrence is a value never seen so far."""
    return sum(1 for n in counts if n == 1) / total if total else 1.0


def _scale(target: float, terms: Iterable[float], intercept: float) -> float:
    return max(1.0, abs(target), abs(intercept), *(abs(t) for t in terms))


def _eliminate(rows: list[list[float]], width: int) -> tuple[list[list[float]], int]:
    """Row-reduce ``rows`` over their first ``width`` columns; the reduced rows and the rank."""
    m = [r[:] for r in rows]
    rank = 0
    for col in range(width):
        if rank == len(m):
            break
        pivot = max(range(rank, len(m)), key=lambda r: abs(m[r][col]))
        size = max(1.0, *(abs(v) for v in m[pivot][:width]))
        if abs(m[pivot][col]) <= 1e-12 * size:
            continue
        m[rank], m[pivot] = m[pivot], m[rank]
        for r in range(len(m)):
            if r != rank and m[r][col]:
                f = m[r][col] / m[rank][col]
                for c in range(col, len(m[r])):
                    m[r][c] -= f * m[rank][c]
        rank += 1
    return m, rank


def _snap(value: float) -> float:
    rounded = round(value, 6)
    return rounded if abs(value - rounded) <= 1e-9 * max(1.0, abs(value)) else value


def _verify(
    data: Iterable[tuple[list[float], float]], coefs: list[float], intercept: float, tol: float
) -> bool:
    for x, y in data:
        terms = [c * v for c, v in zip(coefs, x, strict=True)]
        if not abs(y - intercept - sum(terms)) <= tol * _scale(y, terms, intercept):
            return False
    return True


def _columns(
    rows: list[dict[str, float]], target: str, xs: tuple[str, ...]
) -> Iterator[tuple[list[float], float]]:
    for row in rows:
        try:
            x = [row[name] for name in xs]
            y = row[target]
        except KeyError:
            continue
        yield x, y


def _fit(
    rows: list[dict[str, float]], target: str, xs: tuple[str, ...], o: MiningOptions
) -> Affine | None:
    """The affine relation of ``target`` on ``xs`` that every row satisfies, if there is one.

    The coefficients come from the first rows in general position; the relation
    is then checked on every row, stopping at the first counterexample, which
    is where almost every candidate ends.
    """
    n = len(xs) + 1
    picked: list[list[float]] = []
    for x, y in _columns(rows, target, xs):
        trial = [*picked, [*x, 1.0, y]]
        if _eliminate(trial, n)[1] == len(trial):
            picked = trial
            if len(picked) == n:
                break
    if len(picked) < n:
        return None
    reduced, _ = _eliminate(picked, n)
    solution = [reduced[i][n] / reduced[i][i] for i in range(n)]
    if any(abs(c) < 1e-9 for c in solution[:-1]):
        return None
    for candidate in ([_snap(c) for c in solution], solution):
        coefs, intercept = candidate[:-1], candidate[-1]
        if _verify(_columns(rows, target, xs), coefs, intercept, o.fit_tolerance):
            data = list(_columns(rows, target, xs))
            distinct = {tuple(x) for x, _ in data}
            if len(data) < o.min_support or len(distinct) < o.min_affine_distinct:
                return None
            return Affine(target, tuple(zip(xs, coefs, strict=True)), intercept, len(data))
    return None


def _skip(record_error: Any, value: Any, from_text: bool, fields: list[tuple[str, Any]]) -> bool:
    """Whether a recorded result is itself a failure, which a contract must not learn from.

    An error-bearing field at the top marks the whole call as failed; deeper
    down it may describe a part, so such a result is kept but error checks
    are then not admitted for the tool.
    """
    if record_error is True:
        return True
    if from_text:
        return isinstance(value, str) and looks_failed(value)
    return any("." not in name for name, _ in fields)


class Miner:
    """Accumulate recorded calls, then produce their contracts.

    The only mutable object in the package, at the edge where records arrive
    one at a time (a JSONL stream, a trace store); ``mine`` wraps it.

    Args:
        options: How much evidence each invariant needs.
    """

    def __init__(self, options: MiningOptions | None = None) -> None:
        self.options = options or MiningOptions()
        self._tools: dict[str, _Tool] = {}

    def add(self, tool: str, arguments: Any, result: Any, *, is_error: bool | None = None) -> bool:
        """Record one call; ``False`` when the result is a failure and was left out.

        Args:
            tool: The tool's name.
            arguments: The call's arguments.
            result: The result: a text or a JSON value.
            is_error: Whether the result is known to be a failure (``None``: judge its text).
        """
        stats = self._tools.get(tool)
        if stats is None:
            stats = self._tools[tool] = _Tool(self.options)
        value, from_text = parse_result(result)
        fields = [] if from_text else error_fields(value)
        if _skip(is_error, value, from_text, fields):
            stats.skipped += 1
            return False
        stats.add(parse_arguments(arguments), value, bool(fields))
        return True

    def contracts(self, substitutes: Mapping[str, Iterable[str]] | None = None) -> Contracts:
        """The contracts mined so far, one per tool, in name order.

        Args:
            substitutes: Each tool's substitutes, for the receipts.
        """
        tools = {
            name: stats.contract(name)
            for name, stats in sorted(self._tools.items())
            if stats.samples > 0
        }
        for name, stats in sorted(self._tools.items()):
            log.info(
                "toolmend.contracts: mined %s from %d results (%d failures left out)",
                name, stats.samples, stats.skipped,
            )  # fmt: skip
        contracts = Contracts(tools)
        return contracts.with_substitutes(substitutes) if substitutes else contracts


def mine(
    calls: Iterable[Mapping[str, Any]],
    *,
    options: MiningOptions | None = None,
    substitutes: Mapping[str, Iterable[str]] | None = None,
) -> Contracts:
    """Contracts from recorded calls ``{"tool", "arguments", "result"[, "is_error"]}``.

    Args:
        calls: The recorded calls.
        options: How much evidence each invariant needs.
        substitutes: Each tool's substitutes, for the receipts.
    """
    miner = Miner(options)
    for call in calls:
        miner.add(
            str(call["tool"]),
            call.get("arguments"),
            call.get("result"),
            is_error=call.get("is_error"),
        )
    return miner.contracts(substitutes)
