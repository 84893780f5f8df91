"""Upstream's perfload job as a cloud and a query: N compute
nodes that all qualify (VCPU, MEMORY_MB, DISK_GB; one aggregate; traits
HW_CPU_X86_AVX2 and COMPUTE_VOLUME_MULTI_ATTACH) and one candidates
query with ``limit=1000``. ``benchmarks.allocation_candidates`` asks it
of running servers, ``benchmarks.request_cpu --perfload`` in process.
"""

from benchmarks.toolkit import cloud_api

TRAITS = ('HW_CPU_X86_AVX2', 'COMPUTE_VOLUME_MULTI_ATTACH')


def aggregate():
    return cloud_api.ident('perfload-agg')


def query():
    """The query string (without ``?``)."""
    return ('resources=VCPU:1,DISK_GB:10,MEMORY_MB:256&member_of=%s'
            '&required=HW_CPU_X86_AVX2&limit=1000' % aggregate())


def path():
    return '/allocation_candidates?' + query()


def jobs(providers):
    """``cloud_api.load`` jobs creating ``providers`` compute nodes."""
    return [[(('perfload-%d-cn%d' % (providers, i), {
        'VCPU': {'total': 32, 'allocation_ratio': 16.0},
        'MEMORY_MB': {'total': 131072},
        'DISK_GB': {'total': 2000}}),
        dict(traits=TRAITS, aggregates=[aggregate()]))]
        for i in range(providers)]
