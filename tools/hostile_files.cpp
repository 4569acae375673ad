#include "hostile_files.hpp"

#include <algorithm>

#include "related/pack.hpp"
#include "related/pack_records.hpp"

namespace stzhostile {

stz::Bytes set_with_member_size(uint64_t size) {
    stz::MemoryFile set;
    {
        auto w = stz::PackWriter::create(set, {});
        const stz::Bytes a(1000, 'a'), b(2000, 'b');
        stz::MemorySource sa(a), sb(b);
        w->add(sa, "a.bin");
        w->add(sb, "b.bin");
        w->commit();
    }
    stz::MemorySource view(set.data);
    stz::PackReader reader(view);
    const uint64_t off = reader.members().at(1).offset;
    stz::RecordHead head = stz::read_record_head(view, off);
    stz::Bytes payload = stz::read_record_payload(view, head, stz::kMaxMemberRecord);
    stz::MemberRecord m = stz::decode_member(payload, head.payload);
    m.size = size;
    m.literal_bytes = size;  // no K/V groups: the literal stream is the whole member
    const stz::Bytes forged = stz::encode_member(m);
    if (forged.size() != payload.size()) throw stz::Error("set_with_member_size: the record changed length");
    std::copy(forged.begin(), forged.end(), set.data.begin() + static_cast<std::ptrdiff_t>(head.payload));
    const uint64_t sum = stz::hash64(forged);
    for (int i = 0; i < 8; ++i) set.data[head.payload + head.length + i] = static_cast<uint8_t>(sum >> (8 * i));
    return set.data;
}

}  // namespace stzhostile
