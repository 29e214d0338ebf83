// Prints what the host C++ compiler makes of the structs and constants of device.cuh, shmem.cuh and
// msccl_interpreter.cuh, for a Java test that compares them with the Java layouts (KiTableLayout, KiKernelLayout,
// ShmemKiLayout, MscclTableLayout).
//
//   layout_probe layout            "struct NAME SIZE", "field STRUCT FIELD OFFSET SIZE", "const NAME VALUE" lines
//   layout_probe dump FILE         reads a KI table from FILE with the C structs and prints its fields:
//                                  "header FIELD VALUE", "send I FIELD VALUE", "wait I FIELD VALUE",
//                                  "template I FIELD VALUE"; values unsigned decimal of the field's width
//   layout_probe msccl-dump FILE   reads an MSCCL kernel table (header, block records, step records) from FILE and
//                                  prints "header FIELD VALUE", "tb I FIELD VALUE" ("buf0".."buf2" for buf),
//                                  "step I FIELD VALUE" lines, likewise
#include "device.cuh"
#include "msccl_interpreter.cuh"
#include "shmem.cuh"

#include <cstdio>
#include <cstring>
#include <vector>

namespace {

#define STRUCT(T) std::printf("struct %s %zu\n", #T, sizeof(T))
#define FIELD(T, f) std::printf("field %s %s %zu %zu\n", #T, #f, offsetof(T, f), sizeof(((T *)nullptr)->f))
#define CONSTANT(c) std::printf("const %s %lld\n", #c, static_cast<long long>(c))

void layout() {
    STRUCT(gds_ki_table_header);
    FIELD(gds_ki_table_header, magic);
    FIELD(gds_ki_table_header, version);
    FIELD(gds_ki_table_header, header_bytes);
    FIELD(gds_ki_table_header, send_count);
    FIELD(gds_ki_table_header, wait_count);
    FIELD(gds_ki_table_header, send_offset);
    FIELD(gds_ki_table_header, wait_offset);
    FIELD(gds_ki_table_header, send_entry_bytes);
    FIELD(gds_ki_table_header, wait_entry_bytes);
    FIELD(gds_ki_table_header, total_bytes);
    FIELD(gds_ki_table_header, template_count);
    FIELD(gds_ki_table_header, template_offset);
    FIELD(gds_ki_table_header, template_entry_bytes);
    FIELD(gds_ki_table_header, status_code);
    FIELD(gds_ki_table_header, status_kind);
    FIELD(gds_ki_table_header, status_index);

    STRUCT(gds_ki_send);
    FIELD(gds_ki_send, dbrec_addr);
    FIELD(gds_ki_send, dbrec_value);
    FIELD(gds_ki_send, flags);
    FIELD(gds_ki_send, db_addr);
    FIELD(gds_ki_send, db_value);

    STRUCT(gds_ki_wait);
    FIELD(gds_ki_wait, word_addr);
    FIELD(gds_ki_wait, value);
    FIELD(gds_ki_wait, cond);
    FIELD(gds_ki_wait, flag_addr);
    FIELD(gds_ki_wait, flag_value);
    FIELD(gds_ki_wait, reserved);

    STRUCT(gds_ki_template);
    FIELD(gds_ki_template, wqe_addr);
    FIELD(gds_ki_template, dbrec_addr);
    FIELD(gds_ki_template, dbrec_value);
    FIELD(gds_ki_template, flags);
    FIELD(gds_ki_template, db_addr);
    FIELD(gds_ki_template, db_value);
    FIELD(gds_ki_template, off_sge_addr);
    FIELD(gds_ki_template, off_sge_lkey);
    FIELD(gds_ki_template, off_sge_length);
    FIELD(gds_ki_template, off_total_length);
    FIELD(gds_ki_template, off_remote_addr);
    FIELD(gds_ki_template, off_rkey);
    FIELD(gds_ki_template, reserved);

    STRUCT(gds_ki_exchange_ctl);
    FIELD(gds_ki_exchange_ctl, role);
    FIELD(gds_ki_exchange_ctl, chunk);
    FIELD(gds_ki_exchange_ctl, arrived);
    FIELD(gds_ki_exchange_ctl, next_send);

    STRUCT(gds_ki_copy);
    FIELD(gds_ki_copy, src);
    FIELD(gds_ki_copy, dst);
    FIELD(gds_ki_copy, bytes);

    STRUCT(gds_ki_exchange_work);
    FIELD(gds_ki_exchange_work, pack);
    FIELD(gds_ki_exchange_work, unpack);
    FIELD(gds_ki_exchange_work, interior);
    FIELD(gds_ki_exchange_work, unpack_count);
    FIELD(gds_ki_exchange_work, interior_chunks);
    FIELD(gds_ki_exchange_work, interior_ns);

    STRUCT(gds_ki_template_args);
    FIELD(gds_ki_template_args, laddr);
    FIELD(gds_ki_template_args, lkey);
    FIELD(gds_ki_template_args, raddr);
    FIELD(gds_ki_template_args, rkey);
    FIELD(gds_ki_template_args, length);
    FIELD(gds_ki_template_args, reserved);

    CONSTANT(GDS_KI_MAGIC);
    CONSTANT(GDS_KI_VERSION);
    CONSTANT(GDS_KI_SEND_SIGNALED);
    CONSTANT(GDS_KI_SEND_FENCE_SYSTEM);
    CONSTANT(GDS_KI_TEMPLATE_MLX5);
    CONSTANT(GDS_KI_FIELD_ABSENT);
    CONSTANT(GDS_KI_OK);
    CONSTANT(GDS_KI_TIMEOUT);
    CONSTANT(GDS_KI_INVALID);
    CONSTANT(GDS_KI_STATUS_CLAIMED);
    CONSTANT(GDS_KI_ABORTED);
    CONSTANT(GDS_KI_ABORT_POLLS);
    CONSTANT(GDS_KI_KIND_NONE);
    CONSTANT(GDS_KI_KIND_SEND);
    CONSTANT(GDS_KI_KIND_WAIT);
    CONSTANT(GDS_KI_KIND_TEMPLATE);
    CONSTANT(GDS_KI_KIND_BARRIER);
    CONSTANT(GDS_KI_COND_GEQ);
    CONSTANT(GDS_KI_COND_EQ);
    CONSTANT(GDS_KI_COND_AND);
    CONSTANT(GDS_KI_COND_NOR);
    CONSTANT(GDS_KI_ARRIVED_OK);
    CONSTANT(GDS_KI_ARRIVED_FAILED);

    STRUCT(gds_shmem_pe);
    FIELD(gds_shmem_pe, heap_nic);
    FIELD(gds_shmem_pe, rkey);
    FIELD(gds_shmem_pe, mapped);
    FIELD(gds_shmem_pe, first);
    FIELD(gds_shmem_pe, count);
    FIELD(gds_shmem_pe, ticket);
    FIELD(gds_shmem_pe, turn);
    FIELD(gds_shmem_pe, reserved);

    STRUCT(gds_shmem_state);
    FIELD(gds_shmem_state, table);
    FIELD(gds_shmem_state, heap);
    FIELD(gds_shmem_state, heap_nic);
    FIELD(gds_shmem_state, heap_bytes);
    FIELD(gds_shmem_state, heap_lkey);
    FIELD(gds_shmem_state, staging);
    FIELD(gds_shmem_state, staging_nic);
    FIELD(gds_shmem_state, staging_lkey);
    FIELD(gds_shmem_state, timeout_ns);
    FIELD(gds_shmem_state, my_pe);
    FIELD(gds_shmem_state, n_pes);
    FIELD(gds_shmem_state, blocks);
    FIELD(gds_shmem_state, exited);
    FIELD(gds_shmem_state, pes);
    FIELD(gds_shmem_state, last);
    FIELD(gds_shmem_state, magic);
    FIELD(gds_shmem_state, version);

    CONSTANT(GDS_SHMEM_MAGIC);
    CONSTANT(GDS_SHMEM_VERSION);
    CONSTANT(GDS_SHMEM_CMP_EQ);
    CONSTANT(GDS_SHMEM_CMP_LE);
    CONSTANT(GDS_SHMEM_SIGNAL_SET);
    CONSTANT(GDS_SHMEM_SIGNAL_ADD);

    STRUCT(gds_msccl_header);
    FIELD(gds_msccl_header, magic);
    FIELD(gds_msccl_header, version);
    FIELD(gds_msccl_header, ntb);
    FIELD(gds_msccl_header, tiles);
    FIELD(gds_msccl_header, tile_elems);
    FIELD(gds_msccl_header, chunk_elems);
    FIELD(gds_msccl_header, slots);
    FIELD(gds_msccl_header, slot_bytes);
    FIELD(gds_msccl_header, dtype);
    FIELD(gds_msccl_header, op);
    FIELD(gds_msccl_header, epoch_base);
    FIELD(gds_msccl_header, sem_offset);

    STRUCT(gds_msccl_tb);
    FIELD(gds_msccl_tb, first_step);
    FIELD(gds_msccl_tb, nsteps);
    FIELD(gds_msccl_tb, gpu_first);
    FIELD(gds_msccl_tb, flags);
    FIELD(gds_msccl_tb, recv_region);
    FIELD(gds_msccl_tb, send_region);
    FIELD(gds_msccl_tb, ack_word);
    FIELD(gds_msccl_tb, peer_ack_word);
    FIELD(gds_msccl_tb, buf);
    FIELD(gds_msccl_tb, status);
    FIELD(gds_msccl_tb, reserved);

    STRUCT(gds_msccl_step);
    FIELD(gds_msccl_step, type);
    FIELD(gds_msccl_step, srcbuf);
    FIELD(gds_msccl_step, dstbuf);
    FIELD(gds_msccl_step, hasdep);
    FIELD(gds_msccl_step, srcoff);
    FIELD(gds_msccl_step, dstoff);
    FIELD(gds_msccl_step, cnt);
    FIELD(gds_msccl_step, depid);
    FIELD(gds_msccl_step, deps);
    FIELD(gds_msccl_step, reserved);

    CONSTANT(GDS_MSCCL_MAGIC);
    CONSTANT(GDS_MSCCL_VERSION);
    CONSTANT(GDS_MSCCL_NONE);
    CONSTANT(GDS_MSCCL_TB_SENDS);
    CONSTANT(GDS_MSCCL_TB_RECEIVES);
    CONSTANT(GDS_MSCCL_INT32);
    CONSTANT(GDS_MSCCL_INT64);
    CONSTANT(GDS_MSCCL_FLOAT32);
    CONSTANT(GDS_MSCCL_FLOAT64);
    CONSTANT(GDS_MSCCL_OP_SUM);
    CONSTANT(GDS_MSCCL_OP_PROD);
    CONSTANT(GDS_MSCCL_OP_MAX);
    CONSTANT(GDS_MSCCL_OP_MIN);
    CONSTANT(GDS_MSCCL_BUF_INPUT);
    CONSTANT(GDS_MSCCL_BUF_OUTPUT);
    CONSTANT(GDS_MSCCL_BUF_SCRATCH);
    CONSTANT(GDS_MSCCL_BUF_NONE);
    CONSTANT(GDS_MSCCL_SEND);
    CONSTANT(GDS_MSCCL_RECV);
    CONSTANT(GDS_MSCCL_RECV_COPY_SEND);
    CONSTANT(GDS_MSCCL_RECV_REDUCE_SEND);
    CONSTANT(GDS_MSCCL_RECV_REDUCE_COPY);
    CONSTANT(GDS_MSCCL_RECV_REDUCE_COPY_SEND);
    CONSTANT(GDS_MSCCL_COPY);
    CONSTANT(GDS_MSCCL_REDUCE);
    CONSTANT(GDS_MSCCL_NOP);
}

// A field's value as an unsigned number of its own width.
template <class V>
unsigned long long as_unsigned(V v) {
    if (sizeof(V) == 2) {
        return static_cast<uint16_t>(v);
    }
    if (sizeof(V) == 4) {
        return static_cast<uint32_t>(v);
    }
    return static_cast<uint64_t>(v);
}

#define VALUE(prefix, e, f) std::printf("%s %s %llu\n", prefix, #f, as_unsigned((e).f))
#define ENTRY_VALUE(kind, i, e, f) std::printf("%s %u %s %llu\n", kind, i, #f, as_unsigned((e).f))

bool read_file(const char *path, std::vector<unsigned char> &bytes) {
    std::FILE *in = std::fopen(path, "rb");
    if (in == nullptr) {
        std::perror(path);
        return false;
    }
    unsigned char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, in)) > 0) {
        bytes.insert(bytes.end(), buffer, buffer + n);
    }
    std::fclose(in);
    return true;
}

int dump(const char *path) {
    std::vector<unsigned char> bytes;
    if (!read_file(path, bytes)) {
        return 1;
    }
    if (bytes.size() < sizeof(gds_ki_table_header)) {
        std::fprintf(stderr, "%s: %zu bytes, shorter than a table header\n", path, bytes.size());
        return 1;
    }
    gds_ki_table_header h;
    std::memcpy(&h, bytes.data(), sizeof h);
    VALUE("header", h, magic);
    VALUE("header", h, version);
    VALUE("header", h, header_bytes);
    VALUE("header", h, send_count);
    VALUE("header", h, wait_count);
    VALUE("header", h, send_offset);
    VALUE("header", h, wait_offset);
    VALUE("header", h, send_entry_bytes);
    VALUE("header", h, wait_entry_bytes);
    VALUE("header", h, total_bytes);
    VALUE("header", h, template_count);
    VALUE("header", h, template_offset);
    VALUE("header", h, template_entry_bytes);
    VALUE("header", h, status_code);
    VALUE("header", h, status_kind);
    VALUE("header", h, status_index);
    if (h.total_bytes > bytes.size()) {
        std::fprintf(stderr, "%s: total_bytes %llu but the file has %zu\n", path,
                     static_cast<unsigned long long>(h.total_bytes), bytes.size());
        return 1;
    }
    for (uint32_t i = 0; i < h.send_count; i++) {
        gds_ki_send e;
        std::memcpy(&e, bytes.data() + h.send_offset + static_cast<size_t>(i) * h.send_entry_bytes, sizeof e);
        ENTRY_VALUE("send", i, e, dbrec_addr);
        ENTRY_VALUE("send", i, e, dbrec_value);
        ENTRY_VALUE("send", i, e, flags);
        ENTRY_VALUE("send", i, e, db_addr);
        ENTRY_VALUE("send", i, e, db_value);
    }
    for (uint32_t i = 0; i < h.wait_count; i++) {
        gds_ki_wait e;
        std::memcpy(&e, bytes.data() + h.wait_offset + static_cast<size_t>(i) * h.wait_entry_bytes, sizeof e);
        ENTRY_VALUE("wait", i, e, word_addr);
        ENTRY_VALUE("wait", i, e, value);
        ENTRY_VALUE("wait", i, e, cond);
        ENTRY_VALUE("wait", i, e, flag_addr);
        ENTRY_VALUE("wait", i, e, flag_value);
    }
    for (uint32_t i = 0; i < h.template_count; i++) {
        gds_ki_template e;
        std::memcpy(&e, bytes.data() + h.template_offset + static_cast<size_t>(i) * h.template_entry_bytes, sizeof e);
        ENTRY_VALUE("template", i, e, wqe_addr);
        ENTRY_VALUE("template", i, e, dbrec_addr);
        ENTRY_VALUE("template", i, e, dbrec_value);
        ENTRY_VALUE("template", i, e, flags);
        ENTRY_VALUE("template", i, e, db_addr);
        ENTRY_VALUE("template", i, e, db_value);
        ENTRY_VALUE("template", i, e, off_sge_addr);
        ENTRY_VALUE("template", i, e, off_sge_lkey);
        ENTRY_VALUE("template", i, e, off_sge_length);
        ENTRY_VALUE("template", i, e, off_total_length);
        ENTRY_VALUE("template", i, e, off_remote_addr);
        ENTRY_VALUE("template", i, e, off_rkey);
    }
    return 0;
}

int msccl_dump(const char *path) {
    std::vector<unsigned char> bytes;
    if (!read_file(path, bytes)) {
        return 1;
    }
    if (bytes.size() < sizeof(gds_msccl_header)) {
        std::fprintf(stderr, "%s: %zu bytes, shorter than an MSCCL table header\n", path, bytes.size());
        return 1;
    }
    gds_msccl_header h;
    std::memcpy(&h, bytes.data(), sizeof h);
    VALUE("header", h, magic);
    VALUE("header", h, version);
    VALUE("header", h, ntb);
    VALUE("header", h, tiles);
    VALUE("header", h, tile_elems);
    VALUE("header", h, chunk_elems);
    VALUE("header", h, slots);
    VALUE("header", h, slot_bytes);
    VALUE("header", h, dtype);
    VALUE("header", h, op);
    VALUE("header", h, epoch_base);
    VALUE("header", h, sem_offset);
    size_t steps_at = sizeof h + static_cast<size_t>(h.ntb) * sizeof(gds_msccl_tb);
    if (steps_at > bytes.size() || (bytes.size() - steps_at) % sizeof(gds_msccl_step) != 0) {
        std::fprintf(stderr, "%s: %zu bytes do not hold %u block records and whole step records\n", path, bytes.size(),
                     h.ntb);
        return 1;
    }
    for (uint32_t i = 0; i < h.ntb; i++) {
        gds_msccl_tb e;
        std::memcpy(&e, bytes.data() + sizeof h + static_cast<size_t>(i) * sizeof e, sizeof e);
        ENTRY_VALUE("tb", i, e, first_step);
        ENTRY_VALUE("tb", i, e, nsteps);
        ENTRY_VALUE("tb", i, e, gpu_first);
        ENTRY_VALUE("tb", i, e, flags);
        ENTRY_VALUE("tb", i, e, recv_region);
        ENTRY_VALUE("tb", i, e, send_region);
        ENTRY_VALUE("tb", i, e, ack_word);
        ENTRY_VALUE("tb", i, e, peer_ack_word);
        for (unsigned k = 0; k < 3; k++) {
            std::printf("tb %u buf%u %llu\n", i, k, as_unsigned(e.buf[k]));
        }
        ENTRY_VALUE("tb", i, e, status);
    }
    uint32_t steps = static_cast<uint32_t>((bytes.size() - steps_at) / sizeof(gds_msccl_step));
    for (uint32_t i = 0; i < steps; i++) {
        gds_msccl_step e;
        std::memcpy(&e, bytes.data() + steps_at + static_cast<size_t>(i) * sizeof e, sizeof e);
        ENTRY_VALUE("step", i, e, type);
        ENTRY_VALUE("step", i, e, srcbuf);
        ENTRY_VALUE("step", i, e, dstbuf);
        ENTRY_VALUE("step", i, e, hasdep);
        ENTRY_VALUE("step", i, e, srcoff);
        ENTRY_VALUE("step", i, e, dstoff);
        ENTRY_VALUE("step", i, e, cnt);
        ENTRY_VALUE("step", i, e, depid);
        ENTRY_VALUE("step", i, e, deps);
    }
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    if (argc == 2 && std::strcmp(argv[1], "layout") == 0) {
        layout();
        return 0;
    }
    if (argc == 3 && std::strcmp(argv[1], "dump") == 0) {
        return dump(argv[2]);
    }
    if (argc == 3 && std::strcmp(argv[1], "msccl-dump") == 0) {
        return msccl_dump(argv[2]);
    }
    std::fprintf(stderr, "usage: %s layout | %s dump FILE | %s msccl-dump FILE\n", argv[0], argv[0], argv[0]);
    return 2;
}
