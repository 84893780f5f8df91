"""The solo service report: kinds as the endpoint hooks name them, each
server's median with its spread, and upstream's figure over ours."""

from benchmarks import solo_service


def test_requests_are_filed_under_the_endpoint_hooks_kinds():
    assert solo_service.endpoint(
        'GET', '/resource_providers?member_of=in:a&required=X') == (
        'GET /resource_providers?member_of&required')
    assert solo_service.endpoint(
        'PUT', '/allocations/1b2c3d4e-0000-4000-8000-000000000001') == (
        'PUT /allocations/{uuid}')


def test_the_report_gives_medians_spreads_and_ratios():
    found = {
        'ours': {'GET /usages?project_id': [
            (0.001, 0.002, 2), (0.002, 0.004, 2), (0.003, 0.003, 2)]},
        'upstream': {'GET /usages?project_id': [
            (0.010, 0.020, 4), (0.012, 0.030, 4), (0.011, 0.010, 4)]},
    }
    lines = solo_service.report(found)
    cpu, wall, sent = (lines[2], lines[5], lines[8])
    assert cpu.split()[2:6] == ['2.00', '[1.00-3.00]', '11.00',
                                '[10.00-12.00]']
    assert cpu.endswith('5.5x')
    assert wall.endswith('6.7x')
    assert sent.split()[2:4] == ['2.00', '[2.00-2.00]']
    assert sent.endswith('2.0x')


def test_no_statements_section_without_counts():
    found = {'ours': {'GET /': [(0.001, 0.001, None)]}}
    lines = solo_service.report(found)
    assert not any('statements' in line for line in lines)
