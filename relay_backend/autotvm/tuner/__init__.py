"""autotvm.tuner: search strategies (tvm.autotvm.tuner).

RandomTuner and GridSearchTuner walk the space; GATuner evolves configs; XGBTuner (needs
xgboost) plans trials with a cost model trained on loop features and can start from other
tasks' records (load_history). All share Tuner.tune: measure in batches, early stopping,
callbacks (callback.py: log_to_file, progress_bar), resume from a log.
"""
from . import callback
from .ga_tuner import GATuner
from .index_based_tuner import GridSearchTuner, RandomTuner
from .model_based_tuner import CostModel, ModelBasedTuner, ModelOptimizer, submodular_pick
from .sa_model_optimizer import SimulatedAnnealingOptimizer
from .tuner import Tuner
from .xgboost_cost_model import XGBoostCostModel
from .xgboost_tuner import XGBTuner
