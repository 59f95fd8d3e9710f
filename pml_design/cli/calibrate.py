"""``pml-design calibrate``: noise scales of the Laplace / Gaussian / histogram mechanisms for a target guarantee."""

from __future__ import annotations

import argparse
import math
from typing import Any

from ._common import (
    FORMATTER,
    argument_type,
    CliError,
    Parser,
    csv_column_counts,
    positive_float,
    positive_int,
    print_json,
    failure_probability,
    read_counts,
    unit_interval,
)

#: α of a histogram: the smallest of k >= 2 bin probabilities is at most 1/k <= 1/2 (histogram paper, Theorem 4).
histogram_alpha = argument_type(float, lambda v: 0 < v <= 0.5, "must lie in (0, 1/2] (the smallest of k >= 2 bin "
                                "probabilities is at most 1/k)")


def add_parser(sub: Any) -> None:
    """Register ``calibrate`` (with ``laplace``, ``gaussian``, ``histogram``) on the subparsers ``sub``."""
    p = sub.add_parser("calibrate", formatter_class=FORMATTER, help="noise scales for a target guarantee",
                       description="Noise scale of the Laplace / Gaussian / histogram mechanisms for a target "
                       "(epsilon, delta)-PML guarantee, next to the context-free (LDP / DP) scale.")
    csub = p.add_subparsers(dest="mechanism", metavar="MECHANISM", parser_class=Parser, required=True)
    c = csub.add_parser("laplace", formatter_class=FORMATTER, help="binary Laplace mechanism (core paper eq. (16))",
                        description="Laplace scale b for (epsilon, delta)-PML of a binary attribute whose smaller "
                        "probability is estimated as p_hat_min from m samples (core paper, eq. (16)).")
    c.add_argument("--epsilon", type=positive_float, required=True)
    c.add_argument("--delta", type=failure_probability, required=True)
    c.add_argument("--p-hat-min", type=unit_interval, required=True, help="smaller estimated probability")
    c.add_argument("--m", type=positive_int, required=True, help="number of samples behind the estimate")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=run_laplace)
    c = csub.add_parser("gaussian", formatter_class=FORMATTER, help="binary Gaussian mechanism (core paper eq. (17))",
                        description="Smallest sigma whose (epsilon*, delta*)-PML guarantee (core paper, Section VI-B) "
                        "meets the target, for P(X=-1) estimated as p_hat from m samples.")
    c.add_argument("--epsilon", type=positive_float, required=True, help="target epsilon*")
    c.add_argument("--delta", type=failure_probability, required=True, help="target delta* (includes delta2)")
    c.add_argument("--delta2", type=failure_probability, default=None, help="failure probability of the estimate "
                   "(default: delta/2)")
    c.add_argument("--p-hat", type=unit_interval, required=True, help="estimate of P(X = -1)")
    c.add_argument("--m", type=positive_int, required=True, help="number of samples behind the estimate")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=run_gaussian)
    c = csub.add_parser("histogram", formatter_class=FORMATTER, help="Laplace histogram (histogram paper eq. (1))",
                        description="Laplace scale of a histogram for epsilon-PML given a lower bound alpha on the "
                        "bin probabilities, or (epsilon, delta)-PML with alpha estimated from counts / a CSV column.")
    c.add_argument("--epsilon", type=positive_float, required=True)
    c.add_argument("--alpha", type=histogram_alpha, default=None, help="lower bound on every bin probability, in "
                   "(0, 1/2] (at most 1/k for k bins); not with --counts/--csv")
    c.add_argument("--counts", metavar="FILE", default=None, help="counts file to estimate alpha from")
    c.add_argument("--csv", metavar="FILE", default=None, help="CSV file to estimate alpha from (one of --alpha, "
                   "--counts, --csv)")
    c.add_argument("--column", default=None, help="column of --csv")
    c.add_argument("--delta", type=failure_probability, default=None, help="failure probability of the estimate")
    c.add_argument("--bins", type=positive_int, default=None, metavar="K", help="number of bins k >= 2, with "
                   "--alpha: checks alpha <= 1/k (every bin has probability >= alpha, so k * alpha <= 1)")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=run_histogram)


def _less_noise(context_free: float, pml: float) -> str:
    """``"2.04x less noise"`` / ``"1.3x more noise"`` for a PML scale against the context-free one."""
    r = context_free / pml
    return f"PML needs {r:.3g}x less noise" if r >= 1 else f"PML needs {1 / r:.3g}x more noise (too few samples)"


def run_laplace(args: argparse.Namespace) -> int:
    """Run ``pml-design calibrate laplace``; returns the exit status."""
    from ..additive.laplace import (  # noqa: PLC0415 - the numerical stack is imported only to run
        laplace_ldp_scale,
        laplace_pml_epsilon_estimated,
        laplace_scale_for,
    )

    b = laplace_scale_for(args.epsilon, args.p_hat_min, args.m, args.delta)
    check = laplace_pml_epsilon_estimated(b, args.p_hat_min, args.m, args.delta)
    b_ldp = laplace_ldp_scale(args.epsilon)
    out = {"mechanism": "laplace (binary, sensitivity 2)", "epsilon": args.epsilon, "delta": args.delta,
           "p_hat_min": args.p_hat_min, "m": args.m, "scale": b, "epsilon_at_scale": check, "ldp_scale": b_ldp,
           "noise_reduction": b_ldp / b, "reference": "core paper, eq. (16) with eq. (14)"}
    if args.json:
        print_json(out)
        return 0
    print(f"Laplace scale for ({args.epsilon:g}, {args.delta:g})-PML with p_hat_min={args.p_hat_min:g} from "
          f"m={args.m} samples: b = {b:.6g}  (eq. (16) at b gives epsilon = {check:.6g})")
    print(f"epsilon-LDP scale 2/epsilon = {b_ldp:.6g}  ->  {_less_noise(b_ldp, b)}")
    return 0


def run_gaussian(args: argparse.Namespace) -> int:
    """Run ``pml-design calibrate gaussian``; returns the exit status."""
    from .._validation import check_delta, check_epsilon  # noqa: PLC0415
    from ..additive.common import binary_l1_radius  # noqa: PLC0415
    from ..additive.gaussian import (  # noqa: PLC0415
        gaussian_delta1,
        gaussian_pml_guarantee,
        pldp_gaussian_sigma,
    )

    eps_star = check_epsilon(args.epsilon, positive=True)
    d_star = check_delta(args.delta)
    d2 = check_delta(args.delta2 if args.delta2 is not None else d_star / 2, "delta2")
    if d2 >= d_star:
        raise CliError(f"argument --delta2: must be < --delta={d_star:g} (it is part of it), got {d2:g}")
    beta = binary_l1_radius(args.m, d2)
    # invert eps* = eps - log(1 - beta e^eps / 2):  e^eps = e^eps* / (1 + beta e^eps* / 2)
    eps = eps_star - math.log1p(beta * math.exp(eps_star) / 2.0)
    if eps <= 0:
        # eps > 0 iff beta < 2 (1 - e^-eps*), beta = sqrt(2 (log 2 - log delta2) / m) (eq. (14))
        need = math.floor((math.log(2.0) - math.log(d2)) / (2.0 * (-math.expm1(-eps_star)) ** 2)) + 1
        raise CliError(f"argument --m: m={args.m} samples are too few for epsilon={eps_star:g} with delta2={d2:g}: "
                       f"the estimate's radius beta={beta:.3g} leaves no epsilon > 0 for the mechanism (eq. (17)); "
                       f"needs m >= {need}, or a larger --epsilon")
    d1_target = (d_star - d2) / (1.0 - d2)

    def d1(sigma: float) -> float:
        return gaussian_delta1(eps, sigma, args.p_hat, beta)

    lo, hi = 1e-3, 1e4
    if d1(hi) > d1_target:
        raise CliError(f"argument --delta: delta={d_star:g} is unreachable for epsilon={eps_star:g} (sigma <= 1e4)")
    if d1(lo) <= d1_target:
        hi = lo
    else:
        for _ in range(80):  # bisection in log sigma
            mid = math.sqrt(lo * hi)
            if d1(mid) <= d1_target:
                hi = mid
            else:
                lo = mid
            if hi / lo < 1 + 1e-9:
                break
    sigma = hi
    g = gaussian_pml_guarantee(eps, sigma, args.p_hat, args.m, d2)  # the certified statement at sigma
    sigma_pldp = pldp_gaussian_sigma(eps_star, d_star)
    out = {"mechanism": "gaussian (binary, sensitivity 2)", "target_epsilon": eps_star, "target_delta": d_star,
           "p_hat": args.p_hat, "m": args.m, "sigma": sigma, "threshold_epsilon": eps, "epsilon_star": g.epsilon_star,
           "delta1": g.delta1, "delta2": g.delta2, "delta_star": g.delta_star, "pldp_sigma": sigma_pldp,
           "noise_reduction": sigma_pldp / sigma, "reference": "core paper, Section VI-B, eq. (17)"}
    if args.json:
        print_json(out)
        return 0
    print(f"Gaussian sigma for ({eps_star:g}, {d_star:g})-PML with p_hat={args.p_hat:g} from m={args.m} samples "
          f"(delta2={d2:g}): sigma = {sigma:.6g}")
    print(f"certified at sigma: epsilon* = {g.epsilon_star:.6g}, delta* = {g.delta_star:.3g} "
          f"(delta1 = {g.delta1:.3g}, threshold epsilon = {eps:.4g})")
    print(f"(epsilon, delta)-pLDP sigma = {sigma_pldp:.6g}  ->  {_less_noise(sigma_pldp, sigma)}")
    return 0


def run_histogram(args: argparse.Namespace) -> int:
    """Run ``pml-design calibrate histogram``; returns the exit status."""
    from ..estimation import counts_distribution, l1_radius  # noqa: PLC0415
    from ..histogram import (  # noqa: PLC0415
        histogram_dp_scale_for,
        histogram_guarantee_from_estimate,
        histogram_scale_for,
    )

    given = [opt for opt, v in (("--alpha", args.alpha), ("--counts", args.counts), ("--csv", args.csv)) if v is not None]
    if len(given) > 1:
        raise CliError(f"argument {given[1]}: not allowed with {given[0]} (alpha is either given or estimated from "
                       "one data file)")
    if args.alpha is not None and args.delta is not None:
        raise CliError("argument --delta: only with --counts/--csv (with --alpha the guarantee is epsilon-PML, "
                       "no failure probability)")
    if args.column is not None and args.csv is None:
        raise CliError("argument --column: only with --csv")
    if args.bins is not None and args.alpha is None:
        raise CliError("argument --bins: only with --alpha (with --counts/--csv the data give the bins)")
    if args.bins is not None and args.bins < 2:
        raise CliError(f"argument --bins: a histogram has k >= 2 bins, got {args.bins}")
    if args.bins is not None and args.alpha * args.bins > 1.0 + 1e-12:
        raise CliError(f"argument --alpha: must be <= 1/k = {1.0 / args.bins:.6g} for --bins={args.bins} (k bins of "
                       f"probability >= alpha sum to at least k * alpha), got {args.alpha:g}")
    if args.alpha is not None:
        try:
            b = histogram_scale_for(args.epsilon, args.alpha, n_bins=args.bins)
            dp_scale = histogram_dp_scale_for(args.epsilon)
        except ValueError as exc:
            raise CliError(f"argument --epsilon: {exc}") from None
        out = {"mechanism": "laplace histogram", "epsilon": args.epsilon, "alpha": args.alpha, "scale": b,
               "epsilon_at_scale": _histogram_epsilon_at(b, args.alpha), "dp_scale": dp_scale}
        if args.bins is not None:
            out["n_bins"] = args.bins
        line = f"for epsilon-PML when every bin has probability >= alpha={args.alpha:g}"
    else:
        if args.counts is None and args.csv is None:
            raise CliError("argument --alpha: give --alpha, or --counts/--csv with --delta")
        if args.delta is None:
            raise CliError("argument --delta: required with --counts/--csv (or give --alpha)")
        if args.counts is not None:
            counts, _ = read_counts(args.counts)
        elif args.csv is not None:
            if args.column is None:
                raise CliError("argument --column: required with --csv")
            counts = csv_column_counts(args.csv, args.column, None)[1]
        else:
            raise CliError("argument --alpha: give --alpha, or --counts/--csv with --delta")
        if counts.size < 2:
            src = "--counts" if args.counts is not None else "--csv"
            raise CliError(f"argument {src}: a histogram needs at least 2 bins (distinct values), the data has "
                           f"{counts.size}")
        m = int(counts.sum())
        p_hat = counts_distribution(counts, allow_zero=True)
        radius = l1_radius(m, counts.size, args.delta)
        try:
            g = histogram_guarantee_from_estimate(p_hat, radius, args.delta, epsilon=args.epsilon)
        except ValueError as exc:
            raise CliError(f"argument --epsilon: {exc}") from None
        b = g.scale
        out = {"mechanism": "laplace histogram", "epsilon": g.epsilon, "delta": g.delta, "alpha": g.alpha,
               "radius": g.radius, "m": m, "n_bins": g.n_bins, "scale": b,
               "epsilon_at_scale": _histogram_epsilon_at(b, g.alpha) if g.alpha > 0 else 2.0 / b,
               "dp_scale": g.dp_scale}
        line = (f"for ({args.epsilon:g}, {args.delta:g})-PML; alpha = {g.alpha:.4g} from m={m} samples "
                f"(radius {g.radius:.4g})")
        if g.alpha <= 0:
            line += ("; alpha = 0 because the radius exceeds twice the smallest estimated bin probability, so the "
                     "PML scale is the DP scale (more samples or a larger delta help)")
    out["reference"] = "histogram paper, Theorem 4, eq. (1)"
    if args.json:
        print_json(out)
        return 0
    print(f"Laplace histogram scale {line}: b = {b:.6g}")
    if b == 0:
        print(f"no noise is needed: the exact histogram leaks at most log(1/alpha) = {out['epsilon_at_scale']:.6g} "
              f"<= epsilon = {args.epsilon:g} (histogram paper, Theorem 4)")
        return 0
    print(f"epsilon-DP scale 2/epsilon = {out['dp_scale']:.6g}  ->  {_less_noise(out['dp_scale'], b)}")
    if args.alpha is not None and args.bins is None:
        print("note: alpha must be <= 1/k for a histogram of k bins (k bins of probability >= alpha sum to 1); "
              "pass --bins K to check it")
    return 0


def _histogram_epsilon_at(b: float, alpha: float) -> float:
    """ε_PML of the Laplace histogram at scale b; at b = 0 (no noise needed) the noiseless bound log(1/α)."""
    from ..histogram import histogram_noiseless_epsilon, histogram_pml_epsilon  # noqa: PLC0415

    return histogram_pml_epsilon(b, alpha) if b > 0 else histogram_noiseless_epsilon(alpha)
