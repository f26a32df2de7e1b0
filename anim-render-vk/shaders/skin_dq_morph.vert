#version 450
#define MORPH
#include "common.glsl"
#include "skin_inputs.glsl"
#include "skin_dq.glsl"
#include "skin_vertex.glsl"
