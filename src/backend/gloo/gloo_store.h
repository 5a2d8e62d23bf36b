// Gloo's rendezvous::Store on collbench's own store (TCP or file), so that
// Gloo meets its peers the way every other backend does: same init methods,
// same job token, keys namespaced under the communicator's prefix.
#pragma once

#include <gloo/rendezvous/store.h>

#include <string>
#include <vector>

#include "backend/gloo/gloo_capi.h"

namespace collgloo {

class StoreAdapter : public gloo::rendezvous::Store {
 public:
  StoreAdapter(coll__store* store, const std::string& prefix)
      : store_(store), prefix_(prefix + "gloo/") {}

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  // collbench's store has its own timeout (-T); Gloo's is not finer.
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

 private:
  [[noreturn]] void fail(const char* what, const std::string& key, int rc);
  coll__store* store_;
  std::string prefix_;
};

} // namespace collgloo
