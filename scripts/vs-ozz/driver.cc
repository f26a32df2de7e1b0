// The ozz-animation 0.16 side of scripts/vs-ozz.sh: times, with ozz's own jobs, the
// workloads that benches/benches/vs_ozz.rs times for this project (BENCHMARKS.md lists
// them), on the same data, and prints one line a workload: "<id> <nanoseconds a call>".
//
//   driver fox DIR SETUP      DIR holds gltf2ozz's output for Fox (skeleton.ozz,
//                             Walk.ozz, Run.ozz, Survey.ozz); SETUP is the file
//                             ci/downstream-bench's vs_ozz_export example writes (the
//                             skinned mesh, its palettes, the IK setups).
//   driver clips SKELETON ANIMATION...
//                             Sampling at 60 Hz, looping, of each animation.
//   driver ik-count SETUP two_bone|two_bone_job N
//                             N calls of the two-bone job, for callgrind (see IkCount).
//
// Each workload runs 0.5 s to warm up, then 31 batches of about 10 ms; the median batch
// gives the time a call. VS_OZZ_SECONDS=T scales both by T (default 1; scripts/vs-ozz.sh
// -t passes its measurement time). This file uses ozz-animation's public headers and links its
// libraries; it holds none of its code.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "ozz/animation/runtime/animation.h"
#include "ozz/animation/runtime/ik_aim_job.h"
#include "ozz/animation/runtime/ik_two_bone_job.h"
#include "ozz/animation/runtime/local_to_model_job.h"
#include "ozz/animation/runtime/sampling_job.h"
#include "ozz/animation/runtime/skeleton.h"
#include "ozz/base/io/archive.h"
#include "ozz/base/io/stream.h"
#include "ozz/base/maths/simd_math.h"
#include "ozz/base/maths/simd_quaternion.h"
#include "ozz/base/maths/soa_transform.h"
#include "ozz/base/span.h"
#include "ozz/base/containers/vector.h"
#include "ozz/geometry/runtime/skinning_job.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace om = ozz::math;

volatile float g_sink;
double g_warm_up_s = 0.5;  // VS_OZZ_SECONDS × 0.5 (see the file comment)

// Median nanoseconds a call of `f` (see the file comment).
double Measure(const std::function<void()>& f) {
  auto seconds = [](Clock::time_point a) {
    return std::chrono::duration<double>(Clock::now() - a).count();
  };
  auto start = Clock::now();
  size_t calls = 0;
  while (seconds(start) < g_warm_up_s) {
    f();
    ++calls;
  }
  const size_t batch = std::max<size_t>(1, static_cast<size_t>(calls / 50.0));
  std::vector<double> ns;
  for (int b = 0; b < 31; ++b) {
    const auto t = Clock::now();
    for (size_t i = 0; i < batch; ++i) f();
    ns.push_back(seconds(t) * 1e9 / static_cast<double>(batch));
  }
  std::sort(ns.begin(), ns.end());
  return ns[ns.size() / 2];
}

void Report(const std::string& id, double ns) { std::printf("%s %.3f\n", id.c_str(), ns); }

template <typename T>
bool Load(const std::string& path, T* out) {
  ozz::io::File file(path.c_str(), "rb");
  if (!file.opened()) {
    std::fprintf(stderr, "cannot open %s\n", path.c_str());
    return false;
  }
  ozz::io::IArchive archive(&file);
  if (!archive.TestTag<T>()) {
    std::fprintf(stderr, "%s holds no %s\n", path.c_str(), "expected object");
    return false;
  }
  archive >> *out;
  return true;
}

// Reads the little-endian file vs_ozz_export writes.
struct Reader {
  std::vector<char> bytes;
  size_t at = 0;
  bool Open(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    return !bytes.empty();
  }
  template <typename T>
  T Get() {
    T v;
    std::memcpy(&v, bytes.data() + at, sizeof(T));
    at += sizeof(T);
    return v;
  }
  std::vector<float> Floats(size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = Get<float>();
    return v;
  }
  om::Float3 Float3() {
    om::Float3 v;
    v.x = Get<float>();
    v.y = Get<float>();
    v.z = Get<float>();
    return v;
  }
  om::SimdFloat4 Vec3() {
    const float x = Get<float>(), y = Get<float>(), z = Get<float>();
    return om::simd_float4::Load(x, y, z, 0.f);
  }
  om::Transform Transform() {
    om::Transform t;
    t.translation.x = Get<float>();
    t.translation.y = Get<float>();
    t.translation.z = Get<float>();
    t.rotation.x = Get<float>();
    t.rotation.y = Get<float>();
    t.rotation.z = Get<float>();
    t.rotation.w = Get<float>();
    t.scale.x = Get<float>();
    t.scale.y = Get<float>();
    t.scale.z = Get<float>();
    return t;
  }
};

om::SimdQuaternion Quat(const om::Transform& t) {
  const om::SimdQuaternion q = {om::simd_float4::Load(t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w)};
  return q;
}

// A local transform whose rotation an IK correction changes.
struct Local {
  om::SimdFloat4 translation, scale;
  om::SimdQuaternion rotation;
  explicit Local(const om::Transform& t)
      : translation(om::simd_float4::Load3PtrU(&t.translation.x)),
        scale(om::simd_float4::Load3PtrU(&t.scale.x)),
        rotation(Quat(t)) {}
  om::Float4x4 Matrix() const { return om::Float4x4::FromAffine(translation, rotation.xyzw, scale); }
};

// Looping playback at 60 Hz: the ratio after one more frame.
float Tick(float* time, float duration) {
  *time = std::fmod(*time + 1.f / 60.f, duration);
  return *time / duration;
}

int Fox(const std::string& dir, const std::string& setup_path) {
  ozz::animation::Skeleton skeleton;
  if (!Load(dir + "/skeleton.ozz", &skeleton)) return 1;
  const char* names[] = {"Walk", "Run", "Survey"};
  ozz::animation::Animation animations[3];
  for (int c = 0; c < 3; ++c) {
    if (!Load(dir + "/" + names[c] + ".ozz", &animations[c])) return 1;
  }
  const int joints = skeleton.num_joints();
  ozz::vector<om::SoaTransform> locals(skeleton.num_soa_joints());
  ozz::vector<om::Float4x4> models(joints);
  ozz::animation::SamplingJob::Context context(joints);

  auto sample = [&](const ozz::animation::Animation& a, float ratio) {
    ozz::animation::SamplingJob job;
    job.animation = &a;
    job.context = &context;
    job.ratio = ratio;
    job.output = ozz::make_span(locals);
    job.Run();
  };
  auto ltm = [&]() {
    ozz::animation::LocalToModelJob job;
    job.skeleton = &skeleton;
    job.input = ozz::make_span(locals);
    job.output = ozz::make_span(models);
    job.Run();
  };
  for (int c = 0; c < 3; ++c) {
    const auto& a = animations[c];
    float time = 0.f;
    Report(std::string("fox/w1_sampling_60hz/") + names[c], Measure([&] { sample(a, Tick(&time, a.duration())); }));
    time = 0.f;
    Report(std::string("fox/w3_sampling_ltm/") + names[c], Measure([&] {
             sample(a, Tick(&time, a.duration()));
             ltm();
           }));
  }
  sample(animations[0], 0.3f / animations[0].duration());
  Report("fox/w2_local_to_model", Measure(ltm));

  // W4: 1000 instances of Walk, each with its own context and outputs, one thread.
  {
    const int n = 1000;
    const auto& a = animations[0];
    std::vector<ozz::animation::SamplingJob::Context> contexts(n);
    std::vector<ozz::vector<om::SoaTransform>> l(n, ozz::vector<om::SoaTransform>(skeleton.num_soa_joints()));
    std::vector<ozz::vector<om::Float4x4>> m(n, ozz::vector<om::Float4x4>(joints));
    std::vector<float> times(n);
    for (int i = 0; i < n; ++i) {
      contexts[i].Resize(joints);
      times[i] = i * a.duration() / n;
    }
    const double ns = Measure([&] {
      for (int i = 0; i < n; ++i) {
        ozz::animation::SamplingJob s;
        s.animation = &a;
        s.context = &contexts[i];
        s.ratio = Tick(&times[i], a.duration());
        s.output = ozz::make_span(l[i]);
        s.Run();
        ozz::animation::LocalToModelJob t;
        t.skeleton = &skeleton;
        t.input = ozz::make_span(l[i]);
        t.output = ozz::make_span(m[i]);
        t.Run();
      }
    });
    Report("fox/w4_crowd1000/Walk", ns / n);
  }

  Reader in;
  if (!in.Open(setup_path)) {
    std::fprintf(stderr, "cannot read %s\n", setup_path.c_str());
    return 1;
  }
  const int vertices = in.Get<uint32_t>(), influences = in.Get<uint32_t>();
  const int palette_joints = in.Get<uint32_t>(), palettes = in.Get<uint32_t>();
  const std::vector<float> positions = in.Floats(3 * vertices), normals = in.Floats(3 * vertices);
  std::vector<uint16_t> indices(influences * vertices);
  for (auto& j : indices) j = in.Get<uint16_t>();
  if ((influences * vertices) % 2) in.Get<uint16_t>();
  const std::vector<float> all_weights = in.Floats(influences * vertices);
  // ozz stores influences − 1 weights a vertex (the last is derived).
  std::vector<float> weights;
  for (int v = 0; v < vertices; ++v) {
    for (int k = 0; k < influences - 1; ++k) weights.push_back(all_weights[v * influences + k]);
  }
  std::vector<std::vector<om::Float4x4>> matrices(palettes, std::vector<om::Float4x4>(palette_joints));
  for (auto& p : matrices) {
    for (auto& mat : p) {
      const std::vector<float> f = in.Floats(16);
      for (int c = 0; c < 4; ++c) mat.cols[c] = om::simd_float4::LoadPtrU(&f[4 * c]);
    }
  }
  // W5: one mesh (palette 0) and 100 meshes with their own palettes and outputs.
  for (const int meshes : {1, 100}) {
    std::vector<std::vector<float>> out_p(meshes, std::vector<float>(3 * vertices));
    std::vector<std::vector<float>> out_n(meshes, std::vector<float>(3 * vertices));
    for (const bool with_normals : {false, true}) {
      const double ns = Measure([&] {
        for (int i = 0; i < meshes; ++i) {
          ozz::geometry::SkinningJob job;
          job.vertex_count = vertices;
          job.influences_count = influences;
          job.joint_matrices = ozz::make_span(matrices[meshes == 1 ? 0 : 1 + i]);
          job.joint_indices = ozz::make_span(indices);
          job.joint_indices_stride = sizeof(uint16_t) * influences;
          job.joint_weights = ozz::make_span(weights);
          job.joint_weights_stride = sizeof(float) * (influences - 1);
          job.in_positions = ozz::make_span(positions);
          job.in_positions_stride = sizeof(float) * 3;
          job.out_positions = ozz::make_span(out_p[i]);
          job.out_positions_stride = sizeof(float) * 3;
          if (with_normals) {
            job.in_normals = ozz::make_span(normals);
            job.in_normals_stride = sizeof(float) * 3;
            job.out_normals = ozz::make_span(out_n[i]);
            job.out_normals_stride = sizeof(float) * 3;
          }
          job.Run();
        }
        g_sink = out_p[0][0];
      });
      Report(std::string("fox/w5_lbs4_pos") + (with_normals ? "_nrm/" : "/") + (meshes == 1 ? "1mesh" : "crowd100"),
             ns);
    }
  }

  // W6: two-bone IK, then aim IK, on benches::{TwoBoneSetup, AimSetup}.
  const om::Transform parent = in.Transform(), upper = in.Transform(), middle = in.Transform();
  const om::SimdFloat4 end = in.Vec3(), pole = in.Vec3();
  std::vector<om::Float3> targets(in.Get<uint32_t>());
  for (auto& t : targets) t = in.Float3();
  const om::Float4x4 parent_m = om::Float4x4::FromAffine(parent);
  const om::Float4x4 upper_m0 = parent_m * om::Float4x4::FromAffine(upper);
  const om::Float4x4 mid_m0 = upper_m0 * om::Float4x4::FromAffine(middle);
  const om::Float4x4 end_m0 = mid_m0 * om::Float4x4::Translation(end);
  // The knee's bend axis in its own space, from the rest bend (ozz takes it as given).
  const om::SimdFloat4 a = upper_m0.cols[3], b = mid_m0.cols[3], c = end_m0.cols[3];
  const om::SimdFloat4 axis_ms = om::Normalize3(om::Cross3(a - b, c - b));
  const om::SimdFloat4 mid_axis = om::Normalize3(om::TransformVector(om::Invert(mid_m0), axis_ms));
  size_t k = 0;
  auto two_bone = [&](const om::Float4x4& um, const om::Float4x4& mm, const om::Float4x4& em, om::SimdQuaternion* su,
                      om::SimdQuaternion* sm) {
    ozz::animation::IKTwoBoneJob job;
    job.target = om::simd_float4::Load3PtrU(&targets[k = (k + 1) % targets.size()].x);
    job.pole_vector = pole;
    job.mid_axis = mid_axis;
    job.start_joint = &um;
    job.mid_joint = &mm;
    job.end_joint = &em;
    job.start_joint_correction = su;
    job.mid_joint_correction = sm;
    bool reached;
    job.reached = &reached;
    job.Run();
  };
  Report("ik/two_bone_job", Measure([&] {
           om::SimdQuaternion su, sm;
           two_bone(upper_m0, mid_m0, end_m0, &su, &sm);
           g_sink = om::GetX(su.xyzw) + om::GetX(sm.xyzw);
         }));
  Report("ik/two_bone", Measure([&] {
           Local u(upper), m(middle);
           const om::Float4x4 um = parent_m * u.Matrix();
           const om::Float4x4 mm = um * m.Matrix();
           const om::Float4x4 em = mm * om::Float4x4::Translation(end);
           om::SimdQuaternion su, sm;
           two_bone(um, mm, em, &su, &sm);
           u.rotation = u.rotation * su;
           m.rotation = m.rotation * sm;
           g_sink = om::GetX(u.rotation.xyzw) + om::GetX(m.rotation.xyzw);
         }));

  const om::Transform neck = in.Transform(), head = in.Transform();
  const om::SimdFloat4 forward = in.Vec3(), up = in.Vec3(), world_up = in.Vec3();
  std::vector<om::Float3> looks(in.Get<uint32_t>());
  for (auto& t : looks) t = in.Float3();
  const om::Float4x4 neck_m = om::Float4x4::FromAffine(neck);
  const om::Float4x4 head_m0 = neck_m * om::Float4x4::FromAffine(head);
  auto aim = [&](const om::Float4x4& hm, om::SimdQuaternion* q) {
    ozz::animation::IKAimJob job;
    job.target = om::simd_float4::Load3PtrU(&looks[k = (k + 1) % looks.size()].x);
    job.forward = forward;
    job.up = up;
    job.pole_vector = world_up;
    job.joint = &hm;
    job.joint_correction = q;
    job.Run();
  };
  Report("ik/aim_job", Measure([&] {
           om::SimdQuaternion q;
           aim(head_m0, &q);
           g_sink = om::GetX(q.xyzw);
         }));
  Report("ik/aim", Measure([&] {
           Local h(head);
           const om::Float4x4 hm = neck_m * h.Matrix();
           om::SimdQuaternion q;
           aim(hm, &q);
           h.rotation = h.rotation * q;
           g_sink = om::GetX(h.rotation.xyzw);
         }));
  return 0;
}

// Instruction counts on a shared machine (BENCHMARKS.md): runs ozz's two-bone job `n`
// times, alone (`two_bone_job`) or from local transforms (`two_bone`), as `Fox` times it,
// for valgrind --tool=callgrind; counts of n and 2n calls differ by n calls.
int IkCount(const std::string& setup_path, const std::string& workload, long n) {
  Reader in;
  if (!in.Open(setup_path)) {
    std::fprintf(stderr, "cannot read %s\n", setup_path.c_str());
    return 1;
  }
  const int vertices = in.Get<uint32_t>(), influences = in.Get<uint32_t>();
  const int palette_joints = in.Get<uint32_t>(), palettes = in.Get<uint32_t>();
  in.Floats(6 * vertices);
  for (int i = 0; i < influences * vertices; ++i) in.Get<uint16_t>();
  if ((influences * vertices) % 2) in.Get<uint16_t>();
  in.Floats(influences * vertices);
  in.Floats(16 * palette_joints * palettes);
  const om::Transform parent = in.Transform(), upper = in.Transform(), middle = in.Transform();
  const om::SimdFloat4 end = in.Vec3(), pole = in.Vec3();
  std::vector<om::Float3> targets(in.Get<uint32_t>());
  for (auto& t : targets) t = in.Float3();
  const om::Float4x4 parent_m = om::Float4x4::FromAffine(parent);
  const om::Float4x4 upper_m0 = parent_m * om::Float4x4::FromAffine(upper);
  const om::Float4x4 mid_m0 = upper_m0 * om::Float4x4::FromAffine(middle);
  const om::Float4x4 end_m0 = mid_m0 * om::Float4x4::Translation(end);
  const om::SimdFloat4 a = upper_m0.cols[3], b = mid_m0.cols[3], c = end_m0.cols[3];
  const om::SimdFloat4 axis_ms = om::Normalize3(om::Cross3(a - b, c - b));
  const om::SimdFloat4 mid_axis = om::Normalize3(om::TransformVector(om::Invert(mid_m0), axis_ms));
  size_t k = 0;
  auto two_bone = [&](const om::Float4x4& um, const om::Float4x4& mm, const om::Float4x4& em, om::SimdQuaternion* su,
                      om::SimdQuaternion* sm) {
    ozz::animation::IKTwoBoneJob job;
    job.target = om::simd_float4::Load3PtrU(&targets[k = (k + 1) % targets.size()].x);
    job.pole_vector = pole;
    job.mid_axis = mid_axis;
    job.start_joint = &um;
    job.mid_joint = &mm;
    job.end_joint = &em;
    job.start_joint_correction = su;
    job.mid_joint_correction = sm;
    bool reached;
    job.reached = &reached;
    job.Run();
  };
  for (long i = 0; i < n; ++i) {
    om::SimdQuaternion su, sm;
    if (workload == "two_bone_job") {
      two_bone(upper_m0, mid_m0, end_m0, &su, &sm);
      g_sink = om::GetX(su.xyzw) + om::GetX(sm.xyzw);
    } else {
      Local u(upper), m(middle);
      const om::Float4x4 um = parent_m * u.Matrix();
      const om::Float4x4 mm = um * m.Matrix();
      const om::Float4x4 em = mm * om::Float4x4::Translation(end);
      two_bone(um, mm, em, &su, &sm);
      u.rotation = u.rotation * su;
      m.rotation = m.rotation * sm;
      g_sink = om::GetX(u.rotation.xyzw) + om::GetX(m.rotation.xyzw);
    }
  }
  return 0;
}

int Clips(const std::string& skeleton_path, int count, char** paths) {
  ozz::animation::Skeleton skeleton;
  if (!Load(skeleton_path, &skeleton)) return 1;
  ozz::vector<om::SoaTransform> locals(skeleton.num_soa_joints());
  for (int i = 0; i < count; ++i) {
    ozz::animation::Animation a;
    if (!Load(paths[i], &a)) return 1;
    ozz::animation::SamplingJob::Context context(a.num_tracks());
    float time = 0.f;
    Report(std::string("clip/") + paths[i], Measure([&] {
             ozz::animation::SamplingJob job;
             job.animation = &a;
             job.context = &context;
             job.ratio = Tick(&time, a.duration());
             job.output = ozz::make_span(locals);
             job.Run();
           }));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (const char* t = std::getenv("VS_OZZ_SECONDS")) g_warm_up_s = 0.5 * std::atof(t);
  if (argc >= 4 && std::string(argv[1]) == "fox") return Fox(argv[2], argv[3]);
  if (argc >= 4 && std::string(argv[1]) == "clips") return Clips(argv[2], argc - 3, argv + 3);
  if (argc == 5 && std::string(argv[1]) == "ik-count") return IkCount(argv[2], argv[3], std::atol(argv[4]));
  std::fprintf(stderr, "usage: %s fox DIR SETUP | clips SKELETON ANIMATION... | ik-count SETUP two_bone[_job] N\n",
               argv[0]);
  return 2;
}
