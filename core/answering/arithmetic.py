"""The small evaluator: an expression over named figures, parsed with `ast` and walked against a whitelist
(`+ - * /`, unary minus, parentheses, `min`, `max`, `round`, the literals 0 and 1), in `Decimal`, with units
checked as the figures combine. Nothing is ever passed to `eval`.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, DecimalException, localcontext

from core.answering.figures import Unit
from core.answering.policy import LIMITS

_CENTS = {"JPY": 0, "KRW": 0}  # currencies without minor units; the rest have cents


class CalculationRefused(ValueError):
    """Raised when a proposed calculation fails a check; the message says which and why."""


@dataclass(frozen=True)
class Amount:
    value: Decimal
    unit: Unit


_SYMBOLS = {ast.Add: "+", ast.Sub: "−", ast.Mult: "×", ast.Div: "÷"}


_PRECEDENCE = {ast.Add: 1, ast.Sub: 1, ast.Mult: 2, ast.Div: 2}


def parse(expression: str) -> ast.expr:
    """The expression's tree, after the checks that need no values: size, syntax, the whitelist."""
    if not expression.strip():
        raise CalculationRefused("the expression is empty")
    if len(expression) > LIMITS.max_expression:
        raise CalculationRefused(f"the expression is longer than {LIMITS.max_expression} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise CalculationRefused(f"the expression can't be read ({type(exc).__name__})") from None
    if sum(1 for _ in ast.walk(tree)) > LIMITS.max_nodes:
        raise CalculationRefused(f"the expression has more than {LIMITS.max_nodes} parts")
    _whitelist(tree.body, 1)
    return tree.body


def _whitelist(node: ast.AST, depth: int) -> None:
    if depth > LIMITS.max_depth:
        raise CalculationRefused(f"the expression is nested more than {LIMITS.max_depth} deep")
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _SYMBOLS:
            raise CalculationRefused(f"the operator {type(node.op).__name__} is not allowed (only + - * /)")
        _whitelist(node.left, depth + 1)
        _whitelist(node.right, depth + 1)
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, ast.USub):
            raise CalculationRefused(f"the operator {type(node.op).__name__} is not allowed")
        _whitelist(node.operand, depth + 1)
    elif isinstance(node, ast.Call):
        name = node.func.id if isinstance(node.func, ast.Name) else ""
        if name not in ("min", "max", "round") or node.keywords:
            raise CalculationRefused("only min, max and round may be called")
        if name == "round":
            if not 1 <= len(node.args) <= 2:
                raise CalculationRefused("round takes round(x) or round(x, 2)")
            if len(node.args) == 2 and not _is_literal(node.args[1], 2):
                raise CalculationRefused("round takes round(x) or round(x, 2)")
            _whitelist(node.args[0], depth + 1)
        else:
            if len(node.args) < 2 or any(isinstance(a, ast.Starred) for a in node.args):
                raise CalculationRefused(f"{name} needs two or more values")
            for arg in node.args:
                _whitelist(arg, depth + 1)
    elif isinstance(node, ast.Name):
        if node.id.startswith("_"):
            raise CalculationRefused(f"the name {node.id!r} is not allowed")
    elif isinstance(node, ast.Constant):
        if not (_is_literal(node, 0) or _is_literal(node, 1)):
            raise CalculationRefused(f"the literal {node.value!r} is not allowed: every figure must be an input")
    elif isinstance(node, ast.Attribute):
        raise CalculationRefused("attribute access is not allowed")
    else:
        raise CalculationRefused(f"{type(node).__name__} is not allowed in a calculation")


def _is_literal(node: ast.AST, value: int) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value == value


def _bounded(amount: Amount) -> Amount:
    if abs(amount.value) > LIMITS.max_magnitude:
        raise CalculationRefused("a value grew beyond any price in the documents")
    return amount


def _add(a: Amount, b: Amount, sign: int) -> Amount:
    value = a.value + sign * b.value
    if a.unit == b.unit:
        return Amount(value, a.unit)
    if {a.unit.plain, b.unit.percent} == {True} or {b.unit.plain, a.unit.percent} == {True}:
        return Amount(value, Unit())  # 1 - 5 %: percentages are fractions
    if a.unit.money and b.unit.money and a.unit.money != b.unit.money:
        raise CalculationRefused(f"mixed currencies: {a.unit.money} and {b.unit.money}")
    if (a.unit.money and b.unit.plain) or (b.unit.money and a.unit.plain):
        raise CalculationRefused("money plus or minus a plain number")
    raise CalculationRefused(f"{a.unit or 'a plain number'} and {b.unit or 'a plain number'} can't be added")


def _multiply(a: Amount, b: Amount) -> Amount:
    value = a.value * b.value
    if a.unit.money and b.unit.money:
        raise CalculationRefused("money times money")
    if a.unit.percent and b.unit.percent:
        raise CalculationRefused("a percentage times a percentage")
    for x, y in ((a, b), (b, a)):
        if y.unit.plain or y.unit.percent:
            return Amount(value, x.unit)
    for x, y in ((a, b), (b, a)):
        if x.unit.per and y.unit.is_quantity:
            if x.unit.per != y.unit.measure:
                wanted = Unit(measure=x.unit.per)
                raise CalculationRefused(f"a price {x.unit} needs a quantity in {wanted}, not {y.unit}")
            return Amount(value, Unit(money=x.unit.money, measure=x.unit.measure))
    raise CalculationRefused(f"{a.unit} times {b.unit} has no meaning here")


def _divide(a: Amount, b: Amount) -> Amount:
    if b.value == 0:
        raise CalculationRefused("division by zero")
    value = a.value / b.value
    if b.unit.money:
        if not a.unit.money:
            raise CalculationRefused("a number divided by money")
        if a.unit.money != b.unit.money:
            raise CalculationRefused(f"mixed currencies: {a.unit.money} and {b.unit.money}")
        if a.unit.per != b.unit.per:
            raise CalculationRefused(f"{a.unit} divided by {b.unit}")
        return Amount(value, Unit())
    if b.unit.plain or b.unit.percent:
        return Amount(value, a.unit)
    if b.unit.is_quantity and not a.unit.per and not a.unit.percent and not a.unit.plain:
        return Amount(value, Unit(money=a.unit.money, measure=a.unit.measure, per=b.unit.measure))
    raise CalculationRefused(f"{a.unit or 'a plain number'} divided by {b.unit}")


def _round(amount: Amount, places: int) -> Amount:
    return Amount(amount.value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN), amount.unit)


def _same_units(values: list[Amount], name: str) -> Unit:
    units = {v.unit for v in values}
    if len(units) != 1:
        raise CalculationRefused(f"{name} of figures in different units")
    return units.pop()


def _evaluate(node: ast.expr, env: Mapping[str, Amount]) -> Amount:
    if isinstance(node, ast.BinOp):
        a, b = _evaluate(node.left, env), _evaluate(node.right, env)
        if isinstance(node.op, ast.Add | ast.Sub):
            return _bounded(_add(a, b, 1 if isinstance(node.op, ast.Add) else -1))
        if isinstance(node.op, ast.Mult):
            return _bounded(_multiply(a, b))
        return _bounded(_divide(a, b))
    if isinstance(node, ast.UnaryOp):
        inner = _evaluate(node.operand, env)
        return Amount(-inner.value, inner.unit)
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)  # the whitelist allows nothing else
        values = [_evaluate(arg, env) for arg in node.args[: 1 if node.func.id == "round" else None]]
        if node.func.id == "round":
            return _round(values[0], 2 if len(node.args) == 2 else 0)
        unit = _same_units(values, node.func.id)
        pick = min if node.func.id == "min" else max
        return Amount(pick(v.value for v in values), unit)
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise CalculationRefused(f"the name {node.id!r} is not one of the inputs")
        return env[node.id]
    assert isinstance(node, ast.Constant)
    return Amount(Decimal(1 if node.value == 1 else 0), Unit())  # the whitelist allows no other literal


def evaluate(expression: str, inputs: Mapping[str, Amount]) -> Amount:
    """The value of `expression` over named inputs, units checked, money rounded half-even to cents."""
    tree = parse(expression)
    with localcontext() as ctx:
        ctx.prec = 34
        try:
            result = _evaluate(tree, inputs)
        except DecimalException as exc:
            raise CalculationRefused(f"the arithmetic failed ({type(exc).__name__})") from None
    if result.unit.money:
        result = _round(result, _CENTS.get(result.unit.money, 2))
    elif result.unit.percent:
        result = Amount(result.value, result.unit)
    return result


def _number(value: Decimal) -> str:
    return f"{value:,f}"


def result_text(amount: Amount) -> str:
    """The result as JSON carries it: money with its cents, a percentage as written (`5` for 5 %)."""
    if amount.unit.percent:
        return f"{(amount.value * 100).normalize():f}"
    if amount.unit.money:
        return f"{amount.value:f}"
    return f"{amount.value.quantize(Decimal('0.0001'), rounding=ROUND_HALF_EVEN).normalize():f}"


def show(node: ast.expr, figures: Mapping[str, str], parent: int = 0, right: bool = False) -> str:
    """The expression as a reader sees it: each name replaced by its figure, × and ÷ for * and /."""
    if isinstance(node, ast.BinOp):
        mine = _PRECEDENCE[type(node.op)]
        text = f"{show(node.left, figures, mine)} {_SYMBOLS[type(node.op)]} {show(node.right, figures, mine, True)}"
        return f"({text})" if mine < parent or (right and mine == parent) else text
    if isinstance(node, ast.UnaryOp):
        return f"−{show(node.operand, figures, 3)}"
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)
        return f"{node.func.id}({', '.join(show(a, figures) for a in node.args)})"
    if isinstance(node, ast.Name):
        return figures.get(node.id, node.id)
    assert isinstance(node, ast.Constant)
    return str(node.value)
