#pragma once
//! \file
//! Every sweeper a `relax::Solver` can dispatch to. The solver includes this header, so a
//! strategy tag it is given always finds its sweeper, and a tag without one reaches the primary
//! template's error (`relax/strategy/traits.hpp`) instead of a wrong specialisation.

#include <relax/strategy/adaptive.cuh>
#include <relax/strategy/auto.cuh>
#include <relax/strategy/column_stream.cuh>
#include <relax/strategy/device_loop.cuh>
#include <relax/strategy/sync.cuh>
#include <relax/strategy/tiled.cuh>
