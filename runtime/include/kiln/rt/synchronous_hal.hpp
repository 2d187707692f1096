// For hosted devices whose submission runs to completion inside `submit`
// (Sophgo's simulator, bmlib's synchronous kernel launch): the HAL's submit,
// wait and reset over a Device with run(desc) and lastStatus().
#ifndef KILN_RT_SYNCHRONOUS_HAL_HPP
#define KILN_RT_SYNCHRONOUS_HAL_HPP

#include "kiln/rt/kiln_rt.h"

namespace kiln::rt {

template <typename Device> void setSynchronousSubmission(kiln_hal &h) {
  h.submit = [](void *ctx, const kiln_submit_desc *desc) {
    if (!desc)
      return KILN_ERR_INVALID_ARGUMENT;
    static_cast<Device *>(ctx)->run(*desc);
    return KILN_OK;
  };
  // The submission has ended by now: wait reports how.
  h.wait = [](void *ctx, uint32_t) { return static_cast<Device *>(ctx)->lastStatus(); };
  h.reset = [](void *) { return KILN_OK; };
}

} // namespace kiln::rt

#endif
