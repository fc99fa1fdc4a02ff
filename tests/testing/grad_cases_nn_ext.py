"""check_grad cases of the issue-20 nn ops with a Relay gradient (the two cross-entropy losses);
grad_cases.py adds them to its table."""
import relay_backend as relay

from .grad_cases import Case, I

NN_EXT_CASES = [
    Case("nn.cross_entropy", relay.nn.cross_entropy, [I((2, 3), 0.2, 1.0), I((2, 3), 0.0, 1.0)]),
    Case("nn.cross_entropy", relay.nn.cross_entropy, [I((4, 1), 0.5, 2.0), I((4, 1))], note="one class"),
    Case("nn.cross_entropy_with_logits", relay.nn.cross_entropy_with_logits, [I((2, 3)), I((2, 3))]),
    Case("nn.cross_entropy_with_logits", relay.nn.cross_entropy_with_logits, [I((1, 5)), I((1, 5), 0.0, 1.0)]),
]
