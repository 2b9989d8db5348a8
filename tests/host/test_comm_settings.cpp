// What MultiCG reads of its Comm's settings (relax::detail::SplitCgSettings): the CPU-free
// variants' time limit, checked; the settings only the Jacobi solvers honour are refused by name
// unless left at their defaults, so none is silently ignored.
#include <catch2/catch.hpp>

#include <relax/multi/comm.hpp>

#include <cstdint>
#include <type_traits>

TEST_CASE("MultiCG takes a Comm's time limit and refuses the Jacobi solvers' settings", "[multi_cg][validation]") {
  auto split_cg_settings = [](const auto& comm) {
    return relax::detail::SplitCgSettings<std::decay_t<decltype(comm)>>::read(comm);
  };
  CHECK(split_cg_settings(relax::HostCopy{}) == 0);
  CHECK(split_cg_settings(relax::PeerStore{}) == relax::PeerStore{}.timeout_ns);
  relax::PeerStore quick;
  quick.timeout_ns = 5'000'000;
  CHECK(split_cg_settings(quick) == 5'000'000u);

  relax::HostCopy overlap;
  overlap.overlap = true;
  CHECK_THROWS_WITH(split_cg_settings(overlap), Catch::Contains("comm.overlap"));
  relax::PeerStore apart;
  apart.launch_per_subdomain = true;
  CHECK_THROWS_WITH(split_cg_settings(apart), Catch::Contains("comm.launch_per_subdomain"));
  relax::PeerStore two;
  two.kernels_per_device = 2;
  CHECK_THROWS_WITH(split_cg_settings(two), Catch::Contains("comm.kernels_per_device"));
  relax::PeerStore silent;
  silent.silent_subdomain = 0;
  CHECK_THROWS_WITH(split_cg_settings(silent), Catch::Contains("set_absent_blocks_for_testing"));
  relax::PeerStore roles;
  roles.blocks = relax::BlockRoles::specialised;
  CHECK_THROWS_WITH(split_cg_settings(roles), Catch::Contains("comm.blocks"));
  for (const std::uint64_t bad : {std::uint64_t{0}, std::uint64_t{3'600'000'000'001ull}}) {
    relax::PeerStore limit;
    limit.timeout_ns = bad;
    CHECK_THROWS_WITH(split_cg_settings(limit), Catch::Contains("comm.timeout_ns"));
  }
}

TEST_CASE("boundary blocks apart are the CPU-free Sync kernel's: the streamed one refuses them", "[multi][validation]") {
  CHECK_NOTHROW(relax::detail::require_block_roles(relax::BlockRoles::edges_first, false));
  CHECK_NOTHROW(relax::detail::require_block_roles(relax::BlockRoles::specialised, false));
  CHECK_NOTHROW(relax::detail::require_block_roles(relax::BlockRoles::edges_first, true));
  CHECK_THROWS_WITH(relax::detail::require_block_roles(relax::BlockRoles::specialised, true),
                    Catch::Contains("comm.blocks") && Catch::Contains("DeviceLoop<Sync>"));
}
