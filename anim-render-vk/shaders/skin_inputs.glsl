// Skinning inputs, read by vertex index ("vertex pulling") in the vertex-shader skinning
// passes and by invocation index in the compute passes.
layout(std430, set = 0, binding = 1) readonly buffer BindVertices { Vertex bind_vertices[]; };
layout(std430, set = 0, binding = 2) readonly buffer Joints { uint joints[]; };
layout(std430, set = 0, binding = 3) readonly buffer Weights { float weights[]; };
