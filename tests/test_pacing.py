"""lsp/pacing.py on a fake clock: the wait follows the analysis time, bursts coalesce, nothing starves."""
import pytest

from bprop_lsp.lsp.pacing import FLOOR_S, LEAD_S, MAX_STALL_S, Pace, WAIT_FACTOR


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


CAP = 0.08


@pytest.fixture
def clock():
    return Clock()


def analysed(pace: Pace, clock: Clock, seconds: float) -> None:
    """One analysis of the current text, run to its end and published."""
    pace.started()
    clock.advance(seconds)
    pace.finished(seconds)
    pace.published()


def test_a_single_edit_after_a_quiet_spell_starts_at_once(clock):
    pace = Pace(CAP, clock)
    pace.edited()
    assert pace.delay() == pytest.approx(LEAD_S)  # (edits sent together with it arrive meanwhile)
    clock.advance(LEAD_S)
    assert pace.delay() == 0
    analysed(pace, clock, 0.007)
    clock.advance(0.15)  # a typist's pause
    pace.edited()
    assert not pace.in_burst
    assert pace.delay() == pytest.approx(LEAD_S)


def test_the_wait_follows_the_smoothed_analysis_time(clock):
    pace = Pace(CAP, clock)
    assert pace.wait() == FLOOR_S  # nothing measured yet
    for _ in range(20):
        pace.finished(0.030)
    assert pace.average == pytest.approx(0.030, rel=1e-3)
    assert pace.wait() == pytest.approx(WAIT_FACTOR * 0.030, rel=1e-3)
    for _ in range(30):
        pace.finished(0.002)
    assert pace.wait() == FLOOR_S  # never below the floor
    for _ in range(30):
        pace.finished(1.0)
    assert pace.wait() == CAP  # never above BPROP_LSP_DEBOUNCE_MS
    pace.finished(0.002)
    assert pace.wait() == CAP  # smoothed: one quick analysis does not undo the average
    assert pace.average > 0.5


def test_edits_back_to_back_wait_only_the_floor_after_the_last(clock):
    pace = Pace(CAP, clock)
    for _ in range(5):
        pace.finished(0.040)  # an analysis of 40 ms: the wait may be up to 20 ms
    pace.edited()
    for _ in range(9):
        clock.advance(0.0002)
        pace.edited()
    assert pace.in_burst
    assert pace.wait() == FLOOR_S  # edits 0.2 ms apart: 2 ms of quiet says the burst is over
    assert pace.delay() == pytest.approx(FLOOR_S)
    clock.advance(FLOOR_S)
    assert pace.delay() == 0


def test_key_repeat_slower_than_the_analysis_is_not_a_burst(clock):
    pace = Pace(CAP, clock)
    for _ in range(5):
        pace.finished(0.010)
    pace.edited()
    for _ in range(10):
        clock.advance(0.030)
        pace.edited()
        assert not pace.in_burst  # the next key comes after the wait: nothing to wait for
        assert pace.delay() == pytest.approx(LEAD_S)


def test_key_repeat_faster_than_the_analysis_coalesces(clock):
    pace = Pace(CAP, clock)
    for _ in range(5):
        pace.finished(0.100)  # wait: min(50 ms, cap 80 ms, 4 x 30 ms)
    pace.edited()
    clock.advance(0.030)
    pace.edited()
    assert pace.in_burst
    assert pace.delay() == pytest.approx(WAIT_FACTOR * 0.100)
    clock.advance(0.030)
    pace.edited()  # the next key: the wait starts again
    assert pace.delay() == pytest.approx(WAIT_FACTOR * 0.100)


def test_a_constant_burst_still_gets_an_analysis_every_max_stall(clock):
    pace = Pace(CAP, clock)
    for _ in range(5):
        pace.finished(0.100)
    starts = []
    t0 = clock.now
    pace.edited()
    clock.advance(LEAD_S)
    pace.started()  # the burst's first edit, on the leading edge (its analysis, and the others, take no time here)
    pace.published()
    first = clock.now
    while clock.now - t0 < 2.0:
        clock.advance(0.010)  # an edit every 10 ms, for two seconds
        pace.edited()
        if pace.delay() == 0:
            assert not pace.may_drop()  # a stalled analysis runs to its end even when it goes stale
            starts.append(clock.now)
            pace.started()
            pace.published()
    gaps = [b - a for a, b in zip([first] + starts, starts)]
    assert len(starts) >= 7
    assert all(g <= MAX_STALL_S + 0.011 for g in gaps)


def test_an_unpublished_edit_made_while_analysing_keeps_its_age(clock):
    pace = Pace(CAP, clock)
    pace.edited()
    pace.started()
    clock.advance(0.1)
    pace.edited()  # arrives while the analysis runs
    clock.advance(0.1)
    pace.finished(0.2)
    pace.published()  # the result of the text before it
    assert pace.unpublished_since == pytest.approx(clock.now - 0.1)
    assert pace.may_drop()
    clock.advance(MAX_STALL_S)
    assert not pace.may_drop()


def test_a_dropped_analysis_publishes_nothing(clock):
    pace = Pace(CAP, clock)
    pace.edited()
    since = pace.unpublished_since
    pace.started()
    clock.advance(0.001)
    pace.edited()  # superseded: the scheduler drops it (no finished, no published)
    pace.started()
    assert pace.unpublished_since == since  # the oldest edit still waits for its diagnostics


def test_a_request_cuts_the_wait_short(clock):
    pace = Pace(CAP, clock)
    for _ in range(5):
        pace.finished(0.100)
    pace.edited()
    clock.advance(0.001)
    pace.edited()
    assert pace.delay() > 0
    pace.hurry()
    assert pace.delay() == 0
    pace.started()
    assert not pace.hurried  # the next burst waits again


def test_a_zero_cap_never_waits(clock):
    pace = Pace(0.0, clock)
    pace.finished(0.05)
    pace.edited()
    clock.advance(0.0001)
    pace.edited()
    assert pace.delay() == 0
