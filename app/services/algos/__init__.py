"""Working an order over time: parents (TWAP, clip, stops, brackets, timed orders, retries at
the credit window) whose children are limit orders sent through the order desk. No Qt.

``specs`` says what the trader asked, ``parents`` holds a parent, its children and the rule
that keeps it from overfilling, ``plans`` decides each next step, ``engine`` carries the steps
out, ``store`` keeps parents on disk and ``restore`` finds out what their children became.
"""
