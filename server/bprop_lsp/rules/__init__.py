"""The rule registry: one module per rule, in code order."""
from __future__ import annotations

from .base import Rule
from .bp001_missing_params import MissingParams
from .bp002_extra_params import ExtraParams
from .bp003_varargs import VarArgs
from .bp004_missing_self import MissingSelf
from .bp005_staticmethod import StaticMethodBprop
from .bp006_classmethod import ClassMethodBprop
from .bp007_construct_defaults import ConstructDefaults
from .bp008_keyword_only_construct import KeywordOnlyConstruct
from .bp009_construct_kwargs import ConstructKwargs
from .bp011_instance_attribute import InstanceAttributeBprop
from .bp012_bprop_none import BpropNone
from .bp013_jit_bprop import JitBprop
from .bp014_swapped_out_dout import SwappedOutDout
from .bp020_non_tuple_return import NonTupleReturn
from .bp021_too_few_grads import TooFewGrads
from .bp022_too_many_grads import TooManyGrads
from .bp023_inconsistent_arity import InconsistentArity
from .bp024_number_gradient import NumberGradient
from .bp025_none_gradient import NoneGradient
from .bp026_tuple_dout import TupleDout
from .bp028_ignores_dout import IgnoresDout
from .bp030_parameter_in_bprop import ParameterInBprop
from .bp031_parameter_grads_zero import ParameterGradsZero
from .bp040_custom_arity import CustomArity
from .bp041_custom_non_tuple import CustomNonTuple
from .bp042_custom_too_few import CustomTooFew
from .bp043_custom_lambda_line import CustomLambdaLine
from .bp044_ignored_primitive_bprop import IgnoredPrimitiveBprop
from .bp045_old_import import OldGradBaseImport
from .bp050_bprop_debug import BpropDebug
from .bp900_unused_noqa import UnusedNoqa

RULE_CLASSES: tuple[type[Rule], ...] = (
    MissingParams, ExtraParams, VarArgs, MissingSelf, StaticMethodBprop, ClassMethodBprop, ConstructDefaults, KeywordOnlyConstruct, ConstructKwargs,
    InstanceAttributeBprop, BpropNone, JitBprop, SwappedOutDout, NonTupleReturn, TooFewGrads, TooManyGrads,
    InconsistentArity, NumberGradient, NoneGradient, TupleDout, IgnoresDout, ParameterInBprop, ParameterGradsZero, CustomArity, CustomNonTuple, CustomTooFew,
    CustomLambdaLine, IgnoredPrimitiveBprop, OldGradBaseImport, BpropDebug, UnusedNoqa,
)
ALL_RULES: tuple[Rule, ...] = tuple(cls() for cls in RULE_CLASSES)
RULES_BY_CODE: dict[str, Rule] = {r.code: r for r in ALL_RULES}
