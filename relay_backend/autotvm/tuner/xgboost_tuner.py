"""XGBTuner: model-based search with the XGBoost cost model (autotvm.tuner.XGBTuner)."""
from ...errors import TuningError
from .model_based_tuner import ModelBasedTuner, ModelOptimizer
from .sa_model_optimizer import SimulatedAnnealingOptimizer
from .xgboost_cost_model import XGBoostCostModel


class XGBTuner(ModelBasedTuner):
    """Tuner whose cost model is XGBoostCostModel(feature_type, loss_type) and whose optimizer is
    simulated annealing ("sa") or a given ModelOptimizer; the model is refit every `plan_size`
    measurements (see model_based_tuner.py)."""

    def __init__(self, task, plan_size=64, feature_type="itervar", loss_type="reg", num_threads=None,
                 optimizer="sa", diversity_filter_ratio=None, log_interval=50):
        cost_model = XGBoostCostModel(task, feature_type=feature_type, loss_type=loss_type,
                                      num_threads=num_threads, log_interval=log_interval // 2)
        if optimizer == "sa":
            optimizer = SimulatedAnnealingOptimizer(task, log_interval=log_interval)
        elif not isinstance(optimizer, ModelOptimizer):
            raise TuningError(f"XGBTuner: optimizer must be 'sa' or a ModelOptimizer, got {optimizer!r}")
        super().__init__(task, cost_model, optimizer, plan_size, diversity_filter_ratio)

    def tune(self, *args, **kwargs):  # noqa: D102  (the base class's, documented there)
        super().tune(*args, **kwargs)
        self.cost_model.feature_cache.clear(self.cost_model.fea_type)    # free the features
