"""The benchmarks: experiment scripts that reproduce the papers and measure the package (``gym-crawl bench NAME``).

Every module is a benchmark with a ``main(argv)``, except the machinery they share (:data:`SHARED`): the
plotting helpers, what every report says about itself, the measuring child processes, and the ``gym-crawl eval``
and ``gym-crawl train`` commands' evaluation and training reports.
"""

#: modules of this package that are not benchmarks (``gym-crawl bench`` neither lists nor runs them)
SHARED = ("child_process", "evaluate", "plotting", "report", "train_report")
