#include "hashing.hpp"

namespace stz {

uint64_t hash64(ByteSpan d) { return XXH3_64bits(d.data(), d.size()); }

Hasher::Hasher() : state_(XXH3_createState()) {
    if (!state_) throw std::bad_alloc();
    XXH3_64bits_reset(static_cast<XXH3_state_t*>(state_));
}
Hasher::~Hasher() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }
void Hasher::update(ByteSpan d) { XXH3_64bits_update(static_cast<XXH3_state_t*>(state_), d.data(), d.size()); }
uint64_t Hasher::digest() const { return XXH3_64bits_digest(static_cast<const XXH3_state_t*>(state_)); }
uint64_t Hasher::digest_after(ByteSpan more) const {
    std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> copy(XXH3_createState(), XXH3_freeState);
    if (!copy) throw std::bad_alloc();
    XXH3_copyState(copy.get(), static_cast<const XXH3_state_t*>(state_));
    XXH3_64bits_update(copy.get(), more.data(), more.size());
    return XXH3_64bits_digest(copy.get());
}

}  // namespace stz
