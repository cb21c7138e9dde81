// The sweep model in one include: axis syntax, presets, overrides, planning and case ids.
#pragma once
#include "profiling/sweep/axis_parse.hpp"
#include "profiling/sweep/overrides.hpp"
#include "profiling/sweep/plan.hpp"
#include "profiling/sweep/preset.hpp"
#include "profiling/sweep/protocol_fields.hpp"
#include "profiling/sweep/sweep_spec.hpp"
