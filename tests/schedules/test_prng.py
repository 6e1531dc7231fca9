from faultkit.schedules.prng import SplitMix64, stream


def test_splitmix64_matches_the_reference_vectors():
    # The outputs of the reference C implementation for seed 1234567.
    rng = SplitMix64(1234567)
    assert [rng.next_u64() for _ in range(5)] == [
        6457827717110365317, 3203168211198807973, 9817491932198370423,
        4593380528125082431, 16408922859458223821,
    ]


def test_uniform_is_in_unit_interval_and_below_is_in_range():
    rng = stream(1, "test")
    assert all(0.0 <= rng.uniform() < 1.0 for _ in range(1000))
    values = [rng.below(7) for _ in range(7000)]
    assert set(values) == set(range(7))
    assert all(800 < values.count(v) < 1200 for v in range(7))


def test_bernoulli_is_exact_at_the_edges():
    rng = stream(2, "test")
    assert not any(rng.bernoulli(0, 10) for _ in range(100))
    assert all(rng.bernoulli(10, 10) for _ in range(100))


def test_streams_depend_on_seed_and_purpose():
    first = [stream(1, "a").next_u64(), stream(1, "b").next_u64(), stream(2, "a").next_u64()]
    assert len(set(first)) == 3
    assert stream(1, "a").next_u64() == first[0]
