// bfloat16 emulation: values are kept in f32 and rounded to the nearest bf16
// (ties to even) after every op, which is what a bf16 kernel that accumulates in
// f32 stores.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>

namespace parity::exec {

inline float round_bf16(float x) {
  uint32_t u = std::bit_cast<uint32_t>(x);
  if (std::isnan(x))
    return std::bit_cast<float>((u | 0x00400000u) & 0xffff0000u);  // stays a (quiet) NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // overflow past the largest bf16 correctly gives inf
  return std::bit_cast<float>(u & 0xffff0000u);
}

// The bf16 bit pattern (upper half of the f32), for ULP distances.
inline uint16_t bf16_bits(float x) {
  return static_cast<uint16_t>(std::bit_cast<uint32_t>(round_bf16(x)) >> 16);
}

}  // namespace parity::exec
