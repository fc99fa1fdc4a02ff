"""XGBoost cost model (autotvm.tuner.XGBoostCostModel): gradient-boosted trees predicting a
config's normalized speed from its features.

feature_type "itervar" uses the loop features of the lowered TIR (autotvm/feature.py: loop
extents, kinds, strides, reuse; comparable across tasks of one template, so it transfers),
"knob" the config's knob values only (fast, per task). loss_type "reg" regresses speed / best
speed; "rank" and "rank-binary" train a pairwise ranking (rank-binary on speeds binarized at
half the best). Training stops when the average recall of the true top-k among the predicted
top-k (k <= plan size) on the training data has not improved for 20 rounds.

A base model (spawn_base_model + fit_log on records of other tasks of the same template) makes
transfer learning: its margin, discounted by 2^(-samples / 64), is where this model's boosting
starts, and is dropped once the discount is below 5%. xgboost is an optional dependency
(`pip install relay_backend[xgboost]`, or the small CPU-only xgboost-cpu package).
"""
import time

import numpy as np

from ...diagnostics import get_logger
from ...errors import TuningError
from ..feature import config_features
from .model_based_tuner import CostModel, FeatureCache

logger = get_logger("autotvm")     # relay_backend.autotvm (TVM: "autotvm")

FEATURE_TYPES = ("itervar", "knob")
LOSS_TYPES = ("reg", "rank", "rank-binary")
MAX_CACHED_FEATURES = 100_000


def import_xgboost():
    """The xgboost module, or a TuningError saying how to install it."""
    try:
        import xgboost
    except ImportError:
        raise TuningError("the XGBoost cost model needs xgboost: pip install relay_backend[xgboost] (or the "
                          "CPU-only xgboost-cpu package)") from None
    return xgboost


def average_recall(preds, labels, n) -> float:
    """Mean over k = 1..n of |true top-k  predicted top-k| / k."""
    n = max(1, min(n, len(labels)))
    true_order = np.argsort(-labels, kind="stable")
    pred_order = np.argsort(-preds, kind="stable")
    total, true_top, pred_top = 0.0, set(), set()
    for k in range(n):
        true_top.add(int(true_order[k]))
        pred_top.add(int(pred_order[k]))
        total += len(true_top & pred_top) / (k + 1)
    return total / n


class XGBoostCostModel(CostModel):
    """See the module doc."""

    def __init__(self, task, feature_type="itervar", loss_type="reg", num_threads=None, log_interval=25,
                 upper_model=None):
        if feature_type not in FEATURE_TYPES:
            raise TuningError(f"XGBoostCostModel: feature_type must be one of {FEATURE_TYPES}, got {feature_type!r}")
        if loss_type not in LOSS_TYPES:
            raise TuningError(f"XGBoostCostModel: loss_type must be one of {LOSS_TYPES}, got {loss_type!r}")
        self.xgb = import_xgboost()
        self.task, self.space = task, task.config_space
        self.fea_type, self.loss_type = feature_type, loss_type
        self.num_threads, self.log_interval = num_threads, log_interval
        objective = "reg:squarederror" if loss_type == "reg" else "rank:pairwise"
        self.xgb_params = {"max_depth": 3, "gamma": 0.0001, "min_child_weight": 1, "subsample": 1.0,
                           "eta": 0.3, "lambda": 1.0, "alpha": 0, "objective": objective, "verbosity": 0}
        # a few hundred rows train fastest on one thread (measured: 100 rounds 0.14 s on 1 thread,
        # 3.2 s on 2 of this machine's busy cores); num_threads asks for more
        self.xgb_params["nthread"] = num_threads or 1
        self.upper_model = upper_model
        self.feature_cache = upper_model.feature_cache if upper_model else FeatureCache()
        self.bst = None
        self.base_model = None
        self.feature_len = None
        self._sample_size = 0

    # -- features -------------------------------------------------------------------------------
    def _features_of(self, task, config) -> np.ndarray:
        if self.fea_type == "knob":
            return config.get_flatten_feature()
        return config_features(task, config)

    def _get_feature(self, indexes) -> np.ndarray:
        cache = self.feature_cache.get(self.fea_type)
        if len(cache) >= MAX_CACHED_FEATURES:
            self.feature_cache.clear(self.fea_type)
            cache = self.feature_cache.get(self.fea_type)
        for i in indexes:
            i = int(i)
            if i not in cache:
                try:
                    cache[i] = self._features_of(self.task, self.space.get(i))
                except Exception:  # noqa: BLE001  (a config the template rejects: no features)
                    cache[i] = None
        return self._stack([cache[int(i)] for i in indexes])

    def _stack(self, rows) -> np.ndarray:
        width = self.feature_len or max((len(r) for r in rows if r is not None), default=1)
        out = np.zeros((len(rows), width), dtype=np.float32)
        for k, r in enumerate(rows):
            if r is not None:
                out[k, :min(width, len(r))] = r[:width]
        return out

    # -- training ---------------------------------------------------------------------------------
    def _labels(self, ys) -> np.ndarray:
        y = np.asarray(ys, dtype=np.float64)
        y = y / max(float(y.max(initial=0.0)), 1e-8)
        if self.loss_type == "rank-binary":
            y = (y >= 0.5).astype(np.float64)
        return y

    def _train(self, x, y, plan_size, rounds, patience, base_margin=None):
        xgb = self.xgb
        order = np.random.permutation(len(x))
        dtrain = xgb.DMatrix(x[order], y[order])
        if base_margin is not None:
            dtrain.set_base_margin(base_margin[order])
        labels = y[order]
        name = f"a-recall@{plan_size}"

        def recall(preds, _dmatrix):
            return name, average_recall(np.asarray(preds), labels, plan_size)
        stop = xgb.callback.EarlyStopping(rounds=patience, metric_name=name, data_name="tr", maximize=True,
                                          save_best=False)
        return xgb.train(self.xgb_params, dtrain, num_boost_round=rounds, evals=[(dtrain, "tr")],
                         custom_metric=recall, callbacks=[stop], verbose_eval=False)

    def _base_discount(self) -> float:
        return 1.0 / (2 ** (self._sample_size / 64.0))

    def fit(self, xs, ys, plan_size):
        start = time.time()
        x = self._get_feature(xs)
        self.feature_len = x.shape[1] if self.feature_len is None else self.feature_len
        self._sample_size = len(x)
        margin = None
        if self.base_model is not None:
            if self._base_discount() < 0.05:
                self.base_model = None
            else:
                margin = self._base_discount() * self.base_model.predict(xs, output_margin=True)
        self.bst = self._train(x, self._labels(ys), plan_size, rounds=400, patience=20, base_margin=margin)
        logger.debug("XGB train: %.2f s, %d observations, %d errors", time.time() - start, len(xs),
                     int(np.sum(np.asarray(ys) <= 0)))

    def fit_log(self, records, plan_size, min_seed_records=500) -> bool:
        """Fit on records of other tasks with this task's template name; False (nothing fitted)
        when fewer than `min_seed_records` usable records are given."""
        rows, ys = [], []
        for inp, res in records:
            if inp.task.name != self.task.name:
                continue
            try:
                inp.task.target = inp.task.target or inp.target
                row = self._features_of(inp.task, inp.config)
            except Exception:  # noqa: BLE001  (a record of an older template: skipped)
                continue
            rows.append(row)
            ys.append(0.0 if res.error_no else float(inp.task.flop or 1) / max(float(np.mean(res.costs)), 1e-12))
        if len(rows) < min_seed_records:
            return False
        self.feature_len = max(len(r) for r in rows)
        self.bst = self._train(self._stack(rows), self._labels(ys), 2 * plan_size, rounds=400, patience=100)
        return True

    def predict(self, xs, output_margin=False) -> np.ndarray:
        if self.bst is None:
            raise TuningError("XGBoostCostModel.predict before fit")
        dtest = self.xgb.DMatrix(self._get_feature(xs))
        if self.base_model is not None:
            dtest.set_base_margin(self._base_discount() * self.base_model.predict(xs, output_margin=True))
        return self.bst.predict(dtest, output_margin=output_margin)

    def load_basemodel(self, base_model):
        self.base_model = base_model
        base_model.upper_model = self
        self.feature_len = base_model.feature_len

    def spawn_base_model(self):
        return XGBoostCostModel(self.task, self.fea_type, self.loss_type, self.num_threads, self.log_interval, self)
