"""Contains all the data models used in inputs/outputs"""

from __future__ import annotations

from .account_list import AccountList
from .account_user_view import AccountUserView
from .account_view import AccountView
from .api_error import ApiError
from .array_counts import ArrayCounts
from .array_spec import ArraySpec
from .array_task import ArrayTask
from .attempt_ref import AttemptRef
from .audit_action import AuditAction
from .audit_entry import AuditEntry
from .audit_list import AuditList
from .autoscale import Autoscale
from .batch_submit import BatchSubmit
from .batching import Batching
from .cancel_many import CancelMany
from .cancel_many_result import CancelManyResult
from .cancel_outcome import CancelOutcome
from .cancel_result import CancelResult
from .cgroup_mode import CgroupMode
from .containment import Containment
from .deadline_status import DeadlineStatus
from .desired import Desired
from .desired_power_caps import DesiredPowerCaps
from .dist_host import DistHost
from .dist_launch import DistLaunch
from .drain import Drain
from .drain_request import DrainRequest
from .endpoint import Endpoint
from .endpoint_set import EndpointSet
from .gateway_sync import GatewaySync
from .gpu_health_type_0 import GpuHealthType0
from .gpu_health_type_0_state import GpuHealthType0State
from .gpu_health_type_1 import GpuHealthType1
from .gpu_health_type_1_state import GpuHealthType1State
from .gpu_info import GpuInfo
from .gpu_link import GpuLink
from .gpu_sample import GpuSample
from .gpu_source import GpuSource
from .gpu_view import GpuView
from .health import Health
from .history_job import HistoryJob
from .history_page import HistoryPage
from .job_deadline import JobDeadline
from .job_elastic import JobElastic
from .job_event import JobEvent
from .job_event_kind import JobEventKind
from .job_events import JobEvents
from .job_list import JobList
from .job_part import JobPart
from .job_rules import JobRules
from .job_speed import JobSpeed
from .job_state import JobState
from .job_submit import JobSubmit
from .job_submit_env import JobSubmitEnv
from .job_submit_mig_type_1 import JobSubmitMigType1
from .job_submit_mig_type_2_type_1 import JobSubmitMigType2Type1
from .job_submit_mig_type_3_type_1 import JobSubmitMigType3Type1
from .job_submit_resources import JobSubmitResources
from .job_update import JobUpdate
from .job_view import JobView
from .job_view_resources import JobViewResources
from .launch import Launch
from .launch_env import LaunchEnv
from .launch_resources import LaunchResources
from .link_kind import LinkKind
from .mig_at import MigAt
from .mig_info import MigInfo
from .mig_instance_info import MigInstanceInfo
from .model_config import ModelConfig
from .model_speed import ModelSpeed
from .node_list import NodeList
from .node_location import NodeLocation
from .node_state import NodeState
from .node_telemetry import NodeTelemetry
from .node_view import NodeView
from .node_view_free_resources import NodeViewFreeResources
from .node_view_gpu_health import NodeViewGpuHealth
from .node_view_resources import NodeViewResources
from .outcome_type_0 import OutcomeType0
from .outcome_type_0_kind import OutcomeType0Kind
from .outcome_type_1 import OutcomeType1
from .outcome_type_1_kind import OutcomeType1Kind
from .outcome_type_2 import OutcomeType2
from .outcome_type_2_kind import OutcomeType2Kind
from .outcome_type_3 import OutcomeType3
from .outcome_type_3_kind import OutcomeType3Kind
from .outcome_type_4 import OutcomeType4
from .outcome_type_4_kind import OutcomeType4Kind
from .outcome_type_5 import OutcomeType5
from .outcome_type_5_kind import OutcomeType5Kind
from .outcome_type_6 import OutcomeType6
from .outcome_type_6_kind import OutcomeType6Kind
from .outcome_type_7 import OutcomeType7
from .outcome_type_7_kind import OutcomeType7Kind
from .outcome_type_8 import OutcomeType8
from .outcome_type_8_kind import OutcomeType8Kind
from .outcome_type_9 import OutcomeType9
from .outcome_type_9_kind import OutcomeType9Kind
from .part_state import PartState
from .preempt_order import PreemptOrder
from .probe import Probe
from .purge_request import PurgeRequest
from .purge_result import PurgeResult
from .queue_list import QueueList
from .queue_view import QueueView
from .queued_known import QueuedKnown
from .queued_launch import QueuedLaunch
from .register import Register
from .register_resources import RegisterResources
from .registered import Registered
from .replica_of import ReplicaOf
from .replica_phase import ReplicaPhase
from .replica_view import ReplicaView
from .report import Report
from .report_ack import ReportAck
from .reservation_list import ReservationList
from .reservation_spec import ReservationSpec
from .reservation_state import ReservationState
from .reservation_view import ReservationView
from .role import Role
from .rollout import Rollout
from .run_event import RunEvent
from .run_event_kind_type_0 import RunEventKindType0
from .run_event_kind_type_0_kind import RunEventKindType0Kind
from .run_event_kind_type_1 import RunEventKindType1
from .run_event_kind_type_1_kind import RunEventKindType1Kind
from .run_event_kind_type_2 import RunEventKindType2
from .run_event_kind_type_2_kind import RunEventKindType2Kind
from .run_event_kind_type_3 import RunEventKindType3
from .run_event_kind_type_3_kind import RunEventKindType3Kind
from .run_event_kind_type_4 import RunEventKindType4
from .run_event_kind_type_4_kind import RunEventKindType4Kind
from .run_event_kind_type_5 import RunEventKindType5
from .run_event_kind_type_5_kind import RunEventKindType5Kind
from .serve_launch import ServeLaunch
from .serve_protocol import ServeProtocol
from .service_endpoints import ServiceEndpoints
from .service_list import ServiceList
from .service_load import ServiceLoad
from .service_spec import ServiceSpec
from .service_view import ServiceView
from .slice_ask_type_0 import SliceAskType0
from .slice_ask_type_0_kind import SliceAskType0Kind
from .slice_ask_type_1 import SliceAskType1
from .slice_ask_type_1_kind import SliceAskType1Kind
from .slice_ask_type_2 import SliceAskType2
from .slice_ask_type_2_kind import SliceAskType2Kind
from .slice_at import SliceAt
from .slice_view import SliceView
from .step_launch import StepLaunch
from .step_request import StepRequest
from .step_state import StepState
from .step_use import StepUse
from .step_view import StepView
from .submitted import Submitted
from .token_create import TokenCreate
from .token_created import TokenCreated
from .token_list import TokenList
from .token_view import TokenView
from .usage import Usage
from .usage_report import UsageReport
from .usage_row import UsageRow
from .who_am_i import WhoAmI
from .workflow_step import WorkflowStep
from .workflow_submit import WorkflowSubmit
from .workflow_submitted import WorkflowSubmitted
from .workflow_submitted_ids import WorkflowSubmittedIds
from .xid_event import XidEvent

__all__ = (
    "AccountList",
    "AccountUserView",
    "AccountView",
    "ApiError",
    "ArrayCounts",
    "ArraySpec",
    "ArrayTask",
    "AttemptRef",
    "AuditAction",
    "AuditEntry",
    "AuditList",
    "Autoscale",
    "BatchSubmit",
    "Batching",
    "CancelMany",
    "CancelManyResult",
    "CancelOutcome",
    "CancelResult",
    "CgroupMode",
    "Containment",
    "DeadlineStatus",
    "Desired",
    "DesiredPowerCaps",
    "DistHost",
    "DistLaunch",
    "Drain",
    "DrainRequest",
    "Endpoint",
    "EndpointSet",
    "GatewaySync",
    "GpuHealthType0",
    "GpuHealthType0State",
    "GpuHealthType1",
    "GpuHealthType1State",
    "GpuInfo",
    "GpuLink",
    "GpuSample",
    "GpuSource",
    "GpuView",
    "Health",
    "HistoryJob",
    "HistoryPage",
    "JobDeadline",
    "JobElastic",
    "JobEvent",
    "JobEventKind",
    "JobEvents",
    "JobList",
    "JobPart",
    "JobRules",
    "JobSpeed",
    "JobState",
    "JobSubmit",
    "JobSubmitEnv",
    "JobSubmitMigType1",
    "JobSubmitMigType2Type1",
    "JobSubmitMigType3Type1",
    "JobSubmitResources",
    "JobUpdate",
    "JobView",
    "JobViewResources",
    "Launch",
    "LaunchEnv",
    "LaunchResources",
    "LinkKind",
    "MigAt",
    "MigInfo",
    "MigInstanceInfo",
    "ModelConfig",
    "ModelSpeed",
    "NodeList",
    "NodeLocation",
    "NodeState",
    "NodeTelemetry",
    "NodeView",
    "NodeViewFreeResources",
    "NodeViewGpuHealth",
    "NodeViewResources",
    "OutcomeType0",
    "OutcomeType0Kind",
    "OutcomeType1",
    "OutcomeType1Kind",
    "OutcomeType2",
    "OutcomeType2Kind",
    "OutcomeType3",
    "OutcomeType3Kind",
    "OutcomeType4",
    "OutcomeType4Kind",
    "OutcomeType5",
    "OutcomeType5Kind",
    "OutcomeType6",
    "OutcomeType6Kind",
    "OutcomeType7",
    "OutcomeType7Kind",
    "OutcomeType8",
    "OutcomeType8Kind",
    "OutcomeType9",
    "OutcomeType9Kind",
    "PartState",
    "PreemptOrder",
    "Probe",
    "PurgeRequest",
    "PurgeResult",
    "QueueList",
    "QueueView",
    "QueuedKnown",
    "QueuedLaunch",
    "Register",
    "RegisterResources",
    "Registered",
    "ReplicaOf",
    "ReplicaPhase",
    "ReplicaView",
    "Report",
    "ReportAck",
    "ReservationList",
    "ReservationSpec",
    "ReservationState",
    "ReservationView",
    "Role",
    "Rollout",
    "RunEvent",
    "RunEventKindType0",
    "RunEventKindType0Kind",
    "RunEventKindType1",
    "RunEventKindType1Kind",
    "RunEventKindType2",
    "RunEventKindType2Kind",
    "RunEventKindType3",
    "RunEventKindType3Kind",
    "RunEventKindType4",
    "RunEventKindType4Kind",
    "RunEventKindType5",
    "RunEventKindType5Kind",
    "ServeLaunch",
    "ServeProtocol",
    "ServiceEndpoints",
    "ServiceList",
    "ServiceLoad",
    "ServiceSpec",
    "ServiceView",
    "SliceAskType0",
    "SliceAskType0Kind",
    "SliceAskType1",
    "SliceAskType1Kind",
    "SliceAskType2",
    "SliceAskType2Kind",
    "SliceAt",
    "SliceView",
    "StepLaunch",
    "StepRequest",
    "StepState",
    "StepUse",
    "StepView",
    "Submitted",
    "TokenCreate",
    "TokenCreated",
    "TokenList",
    "TokenView",
    "Usage",
    "UsageReport",
    "UsageRow",
    "WhoAmI",
    "WorkflowStep",
    "WorkflowSubmit",
    "WorkflowSubmitted",
    "WorkflowSubmittedIds",
    "XidEvent",
)
