// Owning buffers: memory from another allocator (`adopt`, how NVSHMEM's symmetric heap becomes a
// grid's storage) goes back to that allocator's release function, once, after moves and swaps.
#include <catch2/catch.hpp>

#include <relax/core/buffer.hpp>

#include <cstddef>
#include <cstdlib>
#include <utility>

namespace {

int released = 0;
void* last_released = nullptr;

// An allocator like DeviceAllocator's, on the host: counts what goes back to it.
int allocator_released = 0;
struct CountingAllocator {
  static void* allocate(std::size_t bytes) { return std::malloc(bytes); }
  static void release(void* p) noexcept {
    ++allocator_released;
    std::free(p);
  }
};
using Buffer = relax::detail::OwnedArray<float, CountingAllocator>;

void release_to_free(void* p) noexcept {
  ++released;
  last_released = p;
  std::free(p);
}

}  // namespace

TEST_CASE("a buffer owns adopted memory and gives it back to its own release function", "[buffer]") {
  released = 0;
  allocator_released = 0;
  auto* p = static_cast<float*>(std::malloc(16 * sizeof(float)));
  REQUIRE(p != nullptr);
  {
    auto a = Buffer::adopt(p, 16, &release_to_free);
    CHECK(a.data() == p);
    CHECK(a.size() == 16);
    CHECK(a.bytes() == 16 * sizeof(float));
    auto b = std::move(a);
    CHECK(a.data() == nullptr);
    CHECK(a.size() == 0);
    CHECK(b.data() == p);
    Buffer c;  // empty: swapping gives it the adopted memory and its release
    c.swap(b);
    CHECK(b.data() == nullptr);
    CHECK(c.data() == p);
    Buffer d;
    d = std::move(c);
    CHECK(d.data() == p);
    CHECK(released == 0);
  }
  CHECK(released == 1);
  CHECK(last_released == p);
  CHECK(allocator_released == 0);
  {  // memory of the buffer's own allocator still goes back to it
    Buffer own(8);
    Buffer other = Buffer::adopt(static_cast<float*>(std::malloc(4 * sizeof(float))), 4, &release_to_free);
    own.swap(other);
  }
  CHECK(released == 2);
  CHECK(allocator_released == 1);
}
