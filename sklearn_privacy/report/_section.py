"""One section of a privacy report: its conclusions, figures and private channel."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ReportSection:
    """One section of a :class:`~sklearn_privacy.PrivacyReport`.

    The report's ``sections`` list holds one per applicable part, in the order of the
    page; each carries its conclusions, its figures and the time it took.

    Parameters
    ----------
    key : str
        Identifier (``"claim"``, ``"utility"``, ``"release"``, ``"structural"``, ``"fil"``,
        ``"membership"``, ``"inversion"``, ``"audits"``, ``"private"``).
    title : str
        Heading.
    verdicts : list of str
        Plain-language conclusions, each made by one rule of
        ``sklearn_privacy.report._verdicts`` from the numbers and their uncertainty.
    table : list of tuple
        Rows ``(label, value)`` of the section's figures.
    figure_png : bytes or None
        The section's figure (PNG), when matplotlib is installed.
    seconds : float
        Time the section took to compute.
    outcomes : list of str
        The outcome key of each verdict (e.g. ``"leaks"``, ``"cannot_tell"``,
        ``"not_checked"``), in the order of ``verdicts``.
    private_table, private_verdicts, private_outcomes : list
        The section's figures and conclusions computed from the training rows without an
        accounted mechanism: the report's private channel, shown only on the private page
        (``include_private_details=True``) and never pickled.
    private_figure_png : bytes or None
        A figure drawn from the training rows (private channel).

    See Also
    --------
    sklearn_privacy.PrivacyReport : The report these sections make up.

    Examples
    --------
    >>> from sklearn_privacy.report import ReportSection
    >>> s = ReportSection("claim", "What is claimed", verdicts=["No guarantee is claimed."])
    >>> s.key, s.verdicts[0]
    ('claim', 'No guarantee is claimed.')
    """

    key: str
    title: str
    verdicts: list = field(default_factory=list)
    table: list = field(default_factory=list)
    figure_png: bytes | None = field(default=None, repr=False)
    seconds: float = 0.0
    outcomes: list = field(default_factory=list)
    private_table: list = field(default_factory=list, repr=False)
    private_verdicts: list = field(default_factory=list, repr=False)
    private_outcomes: list = field(default_factory=list, repr=False)
    private_figure_png: bytes | None = field(default=None, repr=False)

    def __post_init__(self):
        # sentences given without a rule's outcome (e.g. a hand-built section) are notes
        self.outcomes = list(self.outcomes) + ["note"] * (len(self.verdicts)
                                                          - len(self.outcomes))

    def __getstate__(self):
        # the private channel is never pickled
        state = dict(self.__dict__)
        state.update(private_table=[], private_verdicts=[], private_outcomes=[],
                     private_figure_png=None)
        return state

    def add_private(self, verdict):
        """Append a verdict made from private figures (the private channel).

        Parameters
        ----------
        verdict : object with ``outcome`` and ``text``
            The conclusion to append.
        """
        self.private_verdicts.append(str(verdict))
        self.private_outcomes.append(getattr(verdict, "outcome", ""))

    def forget_private(self):
        """Drop the private channel (what a pickle of the report leaves out)."""
        self.private_table, self.private_verdicts, self.private_outcomes = [], [], []
        self.private_figure_png = None

    def add(self, verdict):
        """Append a verdict: the sentence of one rule and its outcome key.

        Parameters
        ----------
        verdict : object with ``outcome`` and ``text``
            The conclusion to append.
        """
        self.verdicts.append(str(verdict))
        self.outcomes.append(getattr(verdict, "outcome", ""))
