"""``mfu-table``: training jobs (a model or FLOPs per token, tokens per second, GPUs, a preset) as MFU,
HFU and time to train, one row each; a job naming a model is resolved once the models are loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ainotes.base.textcheck import short
from ainotes.core.checks import FieldError
from ainotes.core.hardware import Preset
from ainotes.core.jobs import JOB_FIELDS, ModelsLoader, TrainingJob
from ainotes.fences.body import BodyReader, Fence, load_body
from ainotes.fences.kind import DrawSite, FenceKind
from ainotes.html import tables
from ainotes.html.page import Drawn, Page

MAX_JOBS_PER_TABLE = 20


@dataclass(frozen=True)
class MfuTableRequest:
    """The table's jobs: built while parsing, except those that name a model preset, which the
    drawer builds once the models are loaded (:meth:`resolve`)."""

    jobs: tuple[TrainingJob | PendingJob, ...]

    def resolve(self, models: ModelsLoader) -> tuple[TrainingJob, ...]:
        """Every job built, in the fence's order; a model job's error names its page:line."""
        return tuple(job.build(models) if isinstance(job, PendingJob) else job for job in self.jobs)


def parse_mfu_table(fence: Fence, where: str, presets: Mapping[str, Preset]) -> MfuTableRequest:
    """``mfu-table`` fence: ``jobs``, a list of training jobs (:class:`ainotes.core.jobs.TrainingJob`
    fields plus a ``name``) to compute MFU and HFU for."""
    data, lines = load_body(fence, where)
    outer = BodyReader(fence, where, data, ("jobs",), lines)
    raw_jobs = data.get("jobs")
    if not isinstance(raw_jobs, list) or not raw_jobs:
        outer.fail("jobs", "'jobs' must be a non-empty list of jobs")
    if len(raw_jobs) > MAX_JOBS_PER_TABLE:
        outer.fail("jobs", f"'jobs' may list at most {MAX_JOBS_PER_TABLE}: {len(raw_jobs)}")
    keys = ("name", *JOB_FIELDS)
    jobs: list[TrainingJob | PendingJob] = []
    for index, raw in enumerate(raw_jobs):
        if not isinstance(raw, dict):
            outer.fail("jobs", f"each job must be a mapping of {', '.join(keys)}: {short(raw)}", item=index)
        job = outer.nested(raw, keys)
        name = job.text("name")
        if not name:
            job.fail("name", "'name' is required for each job")
        pending = PendingJob({k: v for k, v in raw.items() if k != "name"}, name, job, presets)
        jobs.append(pending if "model" in raw else pending.build(None))
    return MfuTableRequest(tuple(jobs))


@dataclass(frozen=True)
class PendingJob:
    """One job of an ``mfu-table`` as written, and where: built by :meth:`build`."""

    fields: Mapping[str, Any]
    name: str
    reader: BodyReader
    presets: Mapping[str, Preset]

    def build(self, models: ModelsLoader | None) -> TrainingJob:
        try:
            return TrainingJob.from_fields(self.fields, self.presets, name=self.name, models=models)
        except FieldError as exc:
            self.reader.fail(exc.field, f"job {short(self.name)}: {exc}")


def _draw_mfu_table(site: DrawSite, request: MfuTableRequest, page: Page) -> Drawn:
    return Drawn(tables.mfu_table_html(request.resolve(site.models), site.presets_by_id))


KIND = FenceKind("mfu-table", parse_mfu_table, _draw_mfu_table, chart=False)
