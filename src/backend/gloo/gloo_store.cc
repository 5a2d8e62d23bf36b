#include "backend/gloo/gloo_store.h"

#include <gloo/common/error.h>

#include <cstdlib>

namespace collgloo {

// Gloo's rendezvous keys are "<rank>" and "rank_<rank>": the rank that
// should have written key, else -1.
static int rank_of_key(const std::string& key) {
  std::string digits = key.compare(0, 5, "rank_") == 0 ? key.substr(5) : key;
  if (digits.empty() || digits.size() > 6 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::atoi(digits.c_str());
}

void StoreAdapter::fail(const char* what, const std::string& key, int rc) {
  std::string msg;
  int r = rank_of_key(key);
  if (r >= 0 && rc == COLL_ETIMEDOUT)
    msg = "rank " + std::to_string(r) + " did not publish its Gloo address within " +
          std::to_string(static_cast<int>(store_->timeout_s)) + " s (store key " + prefix_ + key +
          ")";
  else if (r >= 0) // the store failed (its host died?) while we waited for rank r
    msg = "waiting for rank " + std::to_string(r) + "'s Gloo address (store key " + prefix_ + key +
          "): " + coll_strerror(rc);
  else
    msg = std::string("rendezvous store ") + what + " '" + prefix_ + key +
          "' failed: " + coll_strerror(rc);
  if (store_->err.msg[0]) msg += std::string(" (") + store_->err.msg + ")";
  // IoException: the error Gloo's own stores raise, so Gloo reports it as such.
  throw gloo::IoException(msg);
}

void StoreAdapter::set(const std::string& key, const std::vector<char>& data) {
  std::string k = prefix_ + key;
  int rc = coll__store_set(store_, k.c_str(), data.data(), data.size());
  if (rc) fail("set", key, rc);
}

std::vector<char> StoreAdapter::get(const std::string& key) {
  std::string k = prefix_ + key;
  void* val = nullptr;
  size_t len = 0;
  int rc = coll__store_get(store_, k.c_str(), &val, &len);
  if (rc) fail("get", key, rc);
  std::vector<char> out(static_cast<char*>(val), static_cast<char*>(val) + len);
  free(val);
  return out;
}

void StoreAdapter::wait(const std::vector<std::string>& keys) {
  std::vector<std::string> full;
  std::vector<const char*> ptrs;
  full.reserve(keys.size());
  for (const auto& k : keys) full.push_back(prefix_ + k);
  for (const auto& k : full) ptrs.push_back(k.c_str());
  int rc = coll__store_wait(store_, ptrs.data(), static_cast<int>(ptrs.size()));
  if (!rc) return;
  // name the first key still missing (its rank), not just the first asked for
  for (size_t i = 0; i < keys.size(); i++) {
    int exists = 1;
    if (store_->ops->check(store_, full[i].c_str(), &exists) == 0 && !exists)
      fail("wait for", keys[i], rc);
  }
  fail("wait for", keys.empty() ? std::string() : keys[0], rc);
}

void StoreAdapter::wait(const std::vector<std::string>& keys,
                        const std::chrono::milliseconds& /*timeout*/) {
  wait(keys);
}

} // namespace collgloo
