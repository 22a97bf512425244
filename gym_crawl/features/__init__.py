"""Named state-action feature sets (see :mod:`gym_crawl.features.sets`)."""
from gym_crawl.features.sets import (
                                     FEATURE_SETS,
                                     CombinedFeatures,
                                     FeatureSet,
                                     Han2018Features,
                                     TresFeatures,
                                     bucket5,
                                     bucket6,
                                     change_bucket,
                                     get_feature_set,
                                     register_feature_set,
)

__all__ = ["FeatureSet", "Han2018Features", "TresFeatures", "CombinedFeatures", "get_feature_set",
           "register_feature_set", "FEATURE_SETS", "bucket5", "bucket6", "change_bucket"]
